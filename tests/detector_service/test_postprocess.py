import numpy as np

from detector_service.models.base import DecodeOptions, Detections
from detector_service.postprocess import nms, select, to_frame


def test_nms_keeps_best_of_overlapping_boxes() -> None:
    boxes = np.array([[0, 0, 10, 10], [1, 1, 11, 11], [20, 20, 30, 30], [0, 0, 10, 10.5]], dtype=np.float32)
    assert nms(boxes, iou_threshold=0.5, max_out=10).tolist() == [0, 2]
    assert nms(boxes, iou_threshold=0.9, max_out=10).tolist() == [0, 1, 2]
    assert nms(boxes, iou_threshold=0.5, max_out=1).tolist() == [0]


def test_select_filters_sorts_and_caps() -> None:
    boxes = np.array([[0, 0, 10, 10], [50, 50, 60, 60], [100, 100, 110, 110], [1, 1, 10, 10]], dtype=np.float32)
    scores = np.array([0.7, 0.2, 0.9, 0.8], dtype=np.float32)
    landmarks = np.arange(4 * 2 * 2, dtype=np.float32).reshape(4, 2, 2)
    out = select(boxes, scores, landmarks, DecodeOptions(score_threshold=0.5, nms_iou=0.3, top_k=3))
    assert out.scores.tolist() == np.float32([0.9, 0.8]).tolist()
    assert out.boxes.tolist() == boxes[[2, 3]].tolist()
    assert out.landmarks.tolist() == landmarks[[2, 3]].tolist()


def test_select_with_nothing_over_threshold() -> None:
    out = select(np.zeros((2, 4), np.float32), np.array([0.1, 0.2]), None, DecodeOptions(0.5, 0.3))
    assert len(out) == 0 and out.boxes.shape == (0, 4)


def test_to_frame_undoes_the_scale_clips_and_drops_empty_boxes() -> None:
    det = Detections(
        boxes=np.array([[10, 20, 30, 40], [-5, 100, 700, 500], [600, 10, 640, 50]], dtype=np.float32),
        scores=np.array([0.9, 0.8, 0.7], dtype=np.float32),
        landmarks=np.array([[[15, 25]], [[0, 0]], [[610, 20]]], dtype=np.float32),
    )
    out = to_frame(det, scale=0.5, width=1000, height=900)  # the third box lies past the frame's right edge
    assert out.boxes.tolist() == [[20, 40, 60, 80], [0, 200, 1000, 900]]
    assert out.scores.tolist() == np.float32([0.9, 0.8]).tolist()
    assert out.landmarks[:, 0].tolist() == [[30, 50], [0, 0]]
