"""Model-independent post-processing: score filter, top-k, NMS, mapping back to the frame."""

import cv2
import numpy as np

from facestream.detector_service.models.base import Detections, Thresholds


def select(boxes: np.ndarray, scores: np.ndarray, landmarks: np.ndarray | None, thresholds: Thresholds) -> Detections:
    """One image's candidates: ``select_batch`` of a batch of one."""
    return select_batch(boxes, scores, landmarks, np.array([len(scores)]), thresholds)[0]


def select_batch(
    boxes: np.ndarray, scores: np.ndarray, landmarks: np.ndarray | None, counts: np.ndarray, thresholds: Thresholds
) -> list[Detections]:
    """Per image (``counts`` candidates each, in image order): the boxes over the score threshold, its best
    ``top_k``, greedy NMS over them best first, and at most ``max_faces`` kept; one Detections per image.

    A whole batch costs a few array calls and one OpenCV NMS call instead of a Python loop per image and
    per kept box: the detector's event-building thread holds the interpreter less, which the decoding
    thread needs back for every image. Each image's boxes are moved to a range of coordinates of their
    own first, so boxes of different images never suppress each other in the one call.
    """
    image = np.repeat(np.arange(len(counts)), counts)
    keep = np.flatnonzero(scores > thresholds.score_threshold)
    keep = keep[np.lexsort((-scores[keep], image[keep]))]  # by image, best first (stable: ties keep their order)
    keep = keep[_rank_in_image(image[keep]) < thresholds.top_k]
    if len(keep):
        b = boxes[keep].astype(np.float64)
        shift = (image[keep] * (b.max() - b.min() + 1.0) - b.min())[:, None]
        x0, y0 = b[:, 0:1] + shift, b[:, 1:2] + shift
        sizes = np.maximum(b[:, 2:4] - b[:, 0:2], 0.0)
        # Every score here is over the threshold already (>= 0): OpenCV keeps scores over 0.
        picked = np.asarray(
            cv2.dnn.NMSBoxes(
                np.hstack([x0, y0, sizes]),  # type: ignore[arg-type]  # OpenCV's stubs say sequences; it takes arrays
                scores[keep].astype(np.float32),  # type: ignore[arg-type]
                0.0,
                thresholds.nms_iou,
            ),
            dtype=np.int64,
        ).reshape(-1)
        keep = keep[picked[np.argsort(image[keep][picked], kind="stable")]]  # back to by image, best first
        keep = keep[_rank_in_image(image[keep]) < thresholds.max_faces]
    ends = np.cumsum(np.bincount(image[keep], minlength=len(counts)))[:-1]
    per_image = np.split(boxes[keep].astype(np.float32), ends), np.split(scores[keep].astype(np.float32), ends)
    marks = [None] * len(counts) if landmarks is None else np.split(landmarks[keep].astype(np.float32), ends)
    return [Detections(boxes=b, scores=s, landmarks=lm) for b, s, lm in zip(*per_image, marks)]


def iou(box: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """Intersection over union of one (x0, y0, x1, y1) box with each of ``boxes``."""
    w = np.maximum(np.minimum(box[2], boxes[:, 2]) - np.maximum(box[0], boxes[:, 0]), 0)
    h = np.maximum(np.minimum(box[3], boxes[:, 3]) - np.maximum(box[1], boxes[:, 1]), 0)
    inter = w * h
    area = max(box[2] - box[0], 0) * max(box[3] - box[1], 0)
    areas = np.maximum(boxes[:, 2] - boxes[:, 0], 0) * np.maximum(boxes[:, 3] - boxes[:, 1], 0)
    return inter / np.maximum(area + areas - inter, 1e-9)


def _rank_in_image(image: np.ndarray) -> np.ndarray:
    """Each element's place among its image's elements, for image numbers in ascending order."""
    return np.arange(len(image)) - np.searchsorted(image, image, side="left")


def to_frames(detections: list[Detections], scale: np.ndarray, sizes: np.ndarray) -> tuple[Detections, np.ndarray]:
    """Undo each image's letterbox (a pure scale: images sit at the top-left) and clip to its frame,
    for a batch at once (per-image array calls cost more than the arithmetic at GPU rates): ``scale``
    is each image's letterbox factor, ``sizes`` its frame's (width, height), as ``Placements`` holds them.

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
    factor = scale.astype(np.float32)[image]
    size = sizes.astype(np.float32)[image]
    boxes = np.concatenate([d.boxes for d in detections]) / factor[:, None]
    np.clip(boxes[:, 0::2], 0, size[:, :1], out=boxes[:, 0::2])
    np.clip(boxes[:, 1::2], 0, size[:, 1:], out=boxes[:, 1::2])
    keep = (boxes[:, 2] > boxes[:, 0]) & (boxes[:, 3] > boxes[:, 1])
    scores = np.concatenate([d.scores for d in detections])[keep]
    landmarks = landmark_scores = None
    if detections[0].landmarks is not None:
        landmarks = np.concatenate([d.landmarks for d in detections])[keep] / factor[keep, None, None]
    if detections[0].landmark_scores is not None:
        landmark_scores = np.concatenate([d.landmark_scores for d in detections])[keep]
    kept = np.bincount(image[keep], minlength=len(detections))
    return Detections(boxes=boxes[keep], scores=scores, landmarks=landmarks, landmark_scores=landmark_scores), kept
