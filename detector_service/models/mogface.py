"""MogFace (CVPR 2022; "MogFace-large" = the ResNet-101 ``mogface`` variant): preprocessing, anchors, boxes.

Files come from ``facestream export mogface`` (the official checkpoint -> ONNX); their metadata names
the variant, the checkpoint's sha256 and the input-size policy. The file's outputs are ``scores``
(N, A, 1) after sigmoid and ``deltas`` (N, A, 4); the engine runs it with ``adapt_graph``'s top-k
appended, so ``to_detections`` sees only the best candidates and their anchor numbers. Constants are those of
the official release (docs/mogface.md lists them).
"""

from typing import ClassVar

import numpy as np

from facestream.detector_service.models import graph_rewrite
from facestream.detector_service.models.base import Detections, InputSpec, InputTransform, Thresholds
from facestream.detector_service.models.postprocess import select_batch
from facestream.schemas import ModelRef

# BGR mean and std of the official preprocessing; the extra /255 after them is part of it too
# (the BN statistics were trained on that scale).
MEAN_BGR = np.array([103.53, 116.28, 123.675], dtype=np.float32)
STD_BGR = np.array([57.375, 57.12, 58.395], dtype=np.float32)
STRIDES = (4, 8, 16, 32, 64, 128)
ANCHOR_SIZES = (16, 32, 64, 128, 256, 512)
ANCHOR_SCALE = 0.68
TOP_K = 5000  # candidates per image kept on the device, best first (the official test's pre-NMS top-k)

# Official single-scale WIDER FACE test settings, for reference and for `--score-threshold 0.01 --nms-iou 0.3`.
OFFICIAL_EVAL = Thresholds(score_threshold=0.01, nms_iou=0.3, top_k=5000, max_faces=750)
# ModelScope's serving defaults: what the released "MogFace-large" pipeline returns to users.
MODELSCOPE_SERVING = Thresholds(score_threshold=0.82, nms_iou=0.4)


class MogFace:
    name: ClassVar[str] = "mogface"
    finds: ClassVar[str] = "faces"
    landmarks: ClassVar[bool] = False
    default_thresholds: ClassVar[Thresholds] = MODELSCOPE_SERVING
    input_transform: ClassVar[InputTransform] = InputTransform(
        mean_bgr=tuple(MEAN_BGR.tolist()), scale_bgr=tuple((1.0 / (STD_BGR * 255.0)).tolist()), to_rgb=True
    )
    ranked_by: ClassVar[str | None] = "scores"
    float16_adapted: ClassVar[bool] = False

    def __init__(self, ref: ModelRef, metadata: dict[str, str]) -> None:
        self.ref = ref
        self.input_spec = InputSpec.from_metadata(metadata, InputSpec(height=480, width=640))
        self._anchors: dict[tuple[int, int], np.ndarray] = {}

    def adapt_graph(self, model) -> None:
        """Only the best ``TOP_K`` anchors per image leave the device (the official decoding keeps the
        top 5000 before its score threshold too): ``scores`` (N, K), ``deltas`` (N, K, 4), ``anchor``."""
        graph_rewrite.keep_top_k(model, "scores", ["deltas"], TOP_K, "anchor")

    def to_detections(
        self, outputs: dict[str, np.ndarray], input_hw: tuple[int, int], thresholds: Thresholds
    ) -> list[Detections]:
        anchors = self.anchors(input_hw)
        scores = outputs["scores"].astype(np.float32)
        passing = scores > thresholds.score_threshold
        image, rank = np.nonzero(passing)  # every image's candidates at once, grouped by image
        boxes = boxes_from_deltas(
            anchors[outputs["anchor"][image, rank]], outputs["deltas"][image, rank].astype(np.float32)
        )
        # The official boxes are inclusive pixel indices (x1 = x0 + w - 1); events use
        # continuous coordinates (x1 = x0 + w), which scale back to the frame exactly.
        boxes[:, 2:] += 1.0
        return select_batch(boxes, scores[image, rank], None, passing.sum(axis=1), thresholds)

    def anchors(self, input_hw: tuple[int, int]) -> np.ndarray:
        if input_hw not in self._anchors:
            self._anchors[input_hw] = make_anchors(*input_hw)
        return self._anchors[input_hw]


def level_sizes(height: int, width: int) -> list[tuple[int, int]]:
    """Feature-map size per level: the input halved with rounding up, twice for stride 4, and so on."""
    sizes = []
    for stride in STRIDES:
        h, w = height, width
        for _ in range(stride.bit_length() - 1):
            h, w = (h + 1) // 2, (w + 1) // 2
        sizes.append((h, w))
    return sizes


def make_anchors(height: int, width: int) -> np.ndarray:
    """(A, 4) anchors as (cx, cy, w, h): one square per position, levels in order, row-major."""
    parts = []
    for (h, w), stride, size in zip(level_sizes(height, width), STRIDES, ANCHOR_SIZES):
        rows, cols = np.mgrid[0:h, 0:w].astype(np.float32)
        side = np.full(h * w, size * ANCHOR_SCALE, dtype=np.float32)
        parts.append(np.stack([(cols.ravel() + 0.5) * stride, (rows.ravel() + 0.5) * stride, side, side], axis=1))
    return np.concatenate(parts)


def boxes_from_deltas(anchors: np.ndarray, deltas: np.ndarray) -> np.ndarray:
    """Boxes as the official code makes them: no variances, "+1 pixel" corners:
    x0 = cx - (w - 1) / 2, x1 = x0 + w - 1."""
    cxcy = anchors[:, :2] + deltas[:, :2] * anchors[:, 2:]
    wh = anchors[:, 2:] * np.exp(deltas[:, 2:])
    x0y0 = cxcy - (wh - 1.0) / 2.0
    return np.concatenate([x0y0, x0y0 + wh - 1.0], axis=1)
