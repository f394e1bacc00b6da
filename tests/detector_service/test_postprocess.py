import numpy as np

from facestream.detector_service.models.base import Detections, Thresholds
from facestream.detector_service.postprocess import nms, select, to_frames
from facestream.detector_service.preprocess import Placed


def test_nms_keeps_best_of_overlapping_boxes() -> None:
    boxes = np.array([[0, 0, 10, 10], [1, 1, 11, 11], [20, 20, 30, 30], [0, 0, 10, 10.5]], dtype=np.float32)
    assert nms(boxes, iou_threshold=0.5, max_out=10).tolist() == [0, 2]
    assert nms(boxes, iou_threshold=0.9, max_out=10).tolist() == [0, 1, 2]
    assert nms(boxes, iou_threshold=0.5, max_out=1).tolist() == [0]


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
    out, kept = to_frames([first, none, second], [Placed(0.5, 1000, 900), Placed(1.0, 64, 48), Placed(2.0, 320, 240)])
    assert kept.tolist() == [2, 0, 1]
    assert out.boxes.tolist() == [[20, 40, 60, 80], [0, 200, 1000, 900], [4, 4, 8, 8]]
    assert out.scores.tolist() == np.float32([0.9, 0.8, 0.6]).tolist()
    assert out.landmarks[:, 0].tolist() == [[30, 50], [0, 0], [5, 6]]


def test_to_frames_with_no_faces_anywhere() -> None:
    empty = Detections(np.zeros((0, 4), np.float32), np.zeros(0, np.float32))
    out, kept = to_frames([empty, empty], [Placed(1.0, 64, 48)] * 2)
    assert kept.tolist() == [0, 0] and out.boxes.shape == (0, 4) and out.landmarks is None
