import numpy as np

from facestream.detector_service.models.base import Detections, Thresholds
from facestream.detector_service.models.postprocess import select, select_batch, to_frames


def greedy(boxes: np.ndarray, scores: np.ndarray, thresholds: Thresholds) -> list[int]:
    """The textbook selection, box by box, that select_batch must match: filter, best top_k, greedy NMS, cap."""
    order = [i for i in sorted(range(len(scores)), key=lambda i: -scores[i]) if scores[i] > thresholds.score_threshold]
    kept: list[int] = []
    for i in order[: thresholds.top_k]:
        if len(kept) == thresholds.max_faces:
            break
        if all(box_iou(boxes[i], boxes[k]) <= thresholds.nms_iou for k in kept):
            kept.append(i)
    return kept


def box_iou(a: np.ndarray, b: np.ndarray) -> float:
    a, b = a.astype(np.float64), b.astype(np.float64)
    inter = max(min(a[2], b[2]) - max(a[0], b[0]), 0) * max(min(a[3], b[3]) - max(a[1], b[1]), 0)
    union = max(a[2] - a[0], 0) * max(a[3] - a[1], 0) + max(b[2] - b[0], 0) * max(b[3] - b[1], 0) - inter
    return inter / union if union > 0 else 0.0


def test_nms_keeps_best_of_overlapping_boxes() -> None:
    boxes = np.array([[0, 0, 10, 10], [1, 1, 11, 11], [20, 20, 30, 30], [0, 0, 10, 10.5]], dtype=np.float32)
    scores = np.array([0.9, 0.8, 0.7, 0.6], dtype=np.float32)
    assert select(boxes, scores, None, Thresholds(0.0, 0.5)).boxes.tolist() == boxes[[0, 2]].tolist()
    assert select(boxes, scores, None, Thresholds(0.0, 0.9)).boxes.tolist() == boxes[[0, 1, 2]].tolist()
    assert select(boxes, scores, None, Thresholds(0.0, 0.5, max_faces=1)).boxes.tolist() == boxes[[0]].tolist()


def test_a_batch_selects_exactly_what_each_image_alone_would() -> None:
    """Random crowded images (boxes past the edges too, tied scores, an empty image) through one call,
    against the box-by-box selection of each image on its own; boxes of different images never interact."""
    rng = np.random.default_rng(7)
    for thresholds in (Thresholds(0.3, 0.3), Thresholds(0.5, 0.45, top_k=12, max_faces=5), Thresholds(0.0, 0.0)):
        counts = np.array([40, 0, 25, 60, 1])
        total = counts.sum()
        corner = rng.uniform(-30, 600, (total, 2))
        boxes = np.hstack([corner, corner + rng.uniform(5, 80, (total, 2))]).astype(np.float32)
        boxes[::3] = boxes[1::3][: len(boxes[::3])] + 1  # near-duplicates across and within images
        scores = rng.choice(np.linspace(0, 1, 21), total).astype(np.float32)  # many ties
        landmarks = rng.uniform(0, 600, (total, 5, 2)).astype(np.float32)
        batch = select_batch(boxes, scores, landmarks, counts, thresholds)
        assert len(batch) == len(counts)
        for image, (lo, hi) in enumerate(zip(np.cumsum(counts) - counts, np.cumsum(counts))):
            expected = [lo + i for i in greedy(boxes[lo:hi], scores[lo:hi], thresholds)]
            assert batch[image].boxes.tolist() == boxes[expected].tolist(), (thresholds, image)
            assert batch[image].scores.tolist() == scores[expected].tolist()
            assert batch[image].landmarks.tolist() == landmarks[expected].tolist()


def test_select_filters_sorts_and_caps() -> None:
    boxes = np.array([[0, 0, 10, 10], [50, 50, 60, 60], [100, 100, 110, 110], [1, 1, 10, 10]], dtype=np.float32)
    scores = np.array([0.7, 0.2, 0.9, 0.8], dtype=np.float32)
    landmarks = np.arange(4 * 2 * 2, dtype=np.float32).reshape(4, 2, 2)
    out = select(boxes, scores, landmarks, Thresholds(score_threshold=0.5, nms_iou=0.3, top_k=3))
    assert out.scores.tolist() == np.float32([0.9, 0.8]).tolist()
    assert out.boxes.tolist() == boxes[[2, 3]].tolist()
    assert out.landmarks.tolist() == landmarks[[2, 3]].tolist()


def test_select_with_nothing_over_threshold() -> None:
    out = select(np.zeros((2, 4), np.float32), np.array([0.1, 0.2]), None, Thresholds(0.5, 0.3))
    assert len(out) == 0 and out.boxes.shape == (0, 4)


def test_to_frames_undoes_each_scale_clips_and_drops_empty_boxes() -> None:
    first = Detections(
        boxes=np.array([[10, 20, 30, 40], [-5, 100, 700, 500], [600, 10, 640, 50]], dtype=np.float32),
        scores=np.array([0.9, 0.8, 0.7], dtype=np.float32),
        landmarks=np.array([[[15, 25]], [[0, 0]], [[610, 20]]], dtype=np.float32),
    )
    none = Detections(np.zeros((0, 4), np.float32), np.zeros(0, np.float32), np.zeros((0, 1, 2), np.float32))
    second = Detections(
        np.array([[8, 8, 16, 16]], np.float32), np.array([0.6], np.float32), np.array([[[10, 12]]], np.float32)
    )
    # The first frame's third box lies past its right edge; the second frame was enlarged twice.
    out, kept = to_frames(
        [first, none, second], np.array([0.5, 1.0, 2.0]), np.array([[1000, 900], [64, 48], [320, 240]])
    )
    assert kept.tolist() == [2, 0, 1]
    assert out.boxes.tolist() == [[20, 40, 60, 80], [0, 200, 1000, 900], [4, 4, 8, 8]]
    assert out.scores.tolist() == np.float32([0.9, 0.8, 0.6]).tolist()
    assert out.landmarks[:, 0].tolist() == [[30, 50], [0, 0], [5, 6]]


def test_to_frames_with_no_faces_anywhere() -> None:
    empty = Detections(np.zeros((0, 4), np.float32), np.zeros(0, np.float32))
    out, kept = to_frames([empty, empty], np.array([1.0, 1.0]), np.array([[64, 48]] * 2))
    assert kept.tolist() == [0, 0] and out.boxes.shape == (0, 4) and out.landmarks is None
