"""Model-independent post-processing: score filter, top-k, NMS, mapping back to the frame."""

import numpy as np

from detector_service.models.base import DecodeOptions, Detections


def select(
    boxes: np.ndarray, scores: np.ndarray, landmarks: np.ndarray | None, options: DecodeOptions
) -> Detections:
    """Keep boxes over the score threshold, the best ``top_k`` of them, then greedy NMS."""
    keep = np.flatnonzero(scores > options.score_threshold)
    if len(keep) > options.top_k:
        keep = keep[np.argpartition(-scores[keep], options.top_k)[: options.top_k]]
    keep = keep[np.argsort(-scores[keep], kind="stable")]
    keep = keep[nms(boxes[keep], options.nms_iou, options.max_faces)]
    return Detections(
        boxes=boxes[keep].astype(np.float32),
        scores=scores[keep].astype(np.float32),
        landmarks=None if landmarks is None else landmarks[keep].astype(np.float32),
    )


def iou(box: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """Intersection over union of one (x0, y0, x1, y1) box with each of ``boxes``."""
    w = np.maximum(np.minimum(box[2], boxes[:, 2]) - np.maximum(box[0], boxes[:, 0]), 0)
    h = np.maximum(np.minimum(box[3], boxes[:, 3]) - np.maximum(box[1], boxes[:, 1]), 0)
    inter = w * h
    area = max(box[2] - box[0], 0) * max(box[3] - box[1], 0)
    areas = np.maximum(boxes[:, 2] - boxes[:, 0], 0) * np.maximum(boxes[:, 3] - boxes[:, 1], 0)
    return inter / np.maximum(area + areas - inter, 1e-9)


def nms(boxes: np.ndarray, iou_threshold: float, max_out: int) -> np.ndarray:
    """Greedy non-maximum suppression over boxes already sorted by descending score."""
    order = np.arange(len(boxes))
    kept: list[int] = []
    while order.size and len(kept) < max_out:
        i = order[0]
        kept.append(i)
        rest = order[1:]
        order = rest[iou(boxes[i], boxes[rest]) <= iou_threshold]
    return np.array(kept, dtype=np.int64)


def to_frame(det: Detections, scale: float, width: int, height: int) -> Detections:
    """Undo the letterbox (a pure scale: images sit at the top-left) and clip to the frame.

    A box left with no area by the clipping (it lay in the letterbox's padding) is dropped.
    """
    boxes = det.boxes / scale
    np.clip(boxes[:, 0::2], 0, width, out=boxes[:, 0::2])
    np.clip(boxes[:, 1::2], 0, height, out=boxes[:, 1::2])
    keep = (boxes[:, 2] > boxes[:, 0]) & (boxes[:, 3] > boxes[:, 1])
    landmarks = None if det.landmarks is None else det.landmarks[keep] / scale
    return Detections(boxes=boxes[keep], scores=det.scores[keep], landmarks=landmarks)
