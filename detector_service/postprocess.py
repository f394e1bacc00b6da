"""Model-independent post-processing: score filter, top-k, NMS, mapping back to the frame."""

import numpy as np

from facestream.detector_service.models.base import Detections, Thresholds
from facestream.detector_service.preprocess import Placed


def select(boxes: np.ndarray, scores: np.ndarray, landmarks: np.ndarray | None, thresholds: Thresholds) -> Detections:
    """Keep boxes over the score threshold, the best ``top_k`` of them, then greedy NMS."""
    keep = np.flatnonzero(scores > thresholds.score_threshold)
    if len(keep) > thresholds.top_k:
        keep = keep[np.argpartition(-scores[keep], thresholds.top_k)[: thresholds.top_k]]
    keep = keep[np.argsort(-scores[keep], kind="stable")]
    keep = keep[nms(boxes[keep], thresholds.nms_iou, thresholds.max_faces)]
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


def to_frames(detections: list[Detections], placed: list[Placed]) -> tuple[Detections, np.ndarray]:
    """Undo each image's letterbox (a pure scale: images sit at the top-left) and clip to its frame,
    for a batch at once (per-image array calls cost more than the arithmetic at GPU rates).

    Returns every image's faces concatenated in image order, and how many each image kept: a box left
    with no area by the clipping (it lay in the letterbox's padding) is dropped.
    """
    counts = np.array([len(d) for d in detections], dtype=np.int64)
    if not counts.sum():
        first = detections[0] if detections else Detections(np.zeros((0, 4), np.float32), np.zeros(0, np.float32))
        landmarks = None if first.landmarks is None else first.landmarks[:0]
        landmark_scores = None if first.landmark_scores is None else first.landmark_scores[:0]
        return Detections(np.zeros((0, 4), np.float32), np.zeros(0, np.float32), landmarks, landmark_scores), counts
    image = np.repeat(np.arange(len(detections)), counts)
    # float32 throughout: the same numbers as scaling each image's float32 boxes by its own factor.
    scale = np.array([p.scale for p in placed], dtype=np.float32)[image]
    size = np.array([(p.width, p.height) for p in placed], dtype=np.float32)[image]
    boxes = np.concatenate([d.boxes for d in detections]) / scale[:, None]
    np.clip(boxes[:, 0::2], 0, size[:, :1], out=boxes[:, 0::2])
    np.clip(boxes[:, 1::2], 0, size[:, 1:], out=boxes[:, 1::2])
    keep = (boxes[:, 2] > boxes[:, 0]) & (boxes[:, 3] > boxes[:, 1])
    scores = np.concatenate([d.scores for d in detections])[keep]
    landmarks = landmark_scores = None
    if detections[0].landmarks is not None:
        landmarks = np.concatenate([d.landmarks for d in detections])[keep] / scale[keep, None, None]
    if detections[0].landmark_scores is not None:
        landmark_scores = np.concatenate([d.landmark_scores for d in detections])[keep]
    kept = np.bincount(image[keep], minlength=len(detections))
    return Detections(boxes=boxes[keep], scores=scores, landmarks=landmarks, landmark_scores=landmark_scores), kept
