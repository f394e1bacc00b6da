"""YuNet's plugin against OpenCV's own YuNet decoder, on real photos, and its batch patch."""

from pathlib import Path

import cv2
import numpy as np
import pytest

from facestream.detector_service import models
from facestream.detector_service.decoding.preprocess import letterbox_into
from facestream.detector_service.inference.engine import Engine
from facestream.detector_service.models import yunet

INPUT_HW = (480, 640)


@pytest.fixture(scope="module")
def plugin(yunet_path: Path):
    return models.plugin_for(models.read_metadata(yunet_path), "yunet")


@pytest.fixture(scope="module")
def runtime(yunet_path: Path, plugin) -> Engine:
    return Engine(yunet_path, INPUT_HW, batch=8, plugin=plugin, provider="cpu", threads=2)


@pytest.fixture(scope="module")
def photos(sample_dir: Path) -> np.ndarray:
    names = ["obama.jpg", "biden.jpg", "breakingbad.jpg", "einstein.jpg", "takeo.ppm"]
    batch = np.zeros((len(names), *INPUT_HW, 3), np.uint8)
    for i, name in enumerate(names):
        letterbox_into(cv2.imread(str(sample_dir / name)), batch[i])
    return batch


def test_file_names_itself(plugin) -> None:
    assert plugin.ref.name == "yunet" and plugin.ref.version == "2023mar"
    assert plugin.ref.weights_sha256 == yunet.WEIGHTS.sha256


def test_batched_equals_one_by_one(runtime, plugin, photos: np.ndarray) -> None:
    thresholds = plugin.default_thresholds
    batched = plugin.to_detections(runtime.run(photos), INPUT_HW, thresholds)
    for i in range(len(photos)):
        (single,) = plugin.to_detections(runtime.run(photos[i : i + 1]), INPUT_HW, thresholds)
        assert len(single) == len(batched[i]) > 0
        np.testing.assert_allclose(batched[i].boxes, single.boxes, atol=1e-3)
        np.testing.assert_allclose(batched[i].scores, single.scores, atol=1e-4)


def test_only_the_best_candidates_leave_the_engine(runtime, photos: np.ndarray) -> None:
    outputs = runtime.run(photos[:2])
    assert set(outputs) == {"scores", "bbox", "kps", "anchor"}
    assert outputs["scores"].shape == (2, yunet.TOP_K) and outputs["kps"].shape == (2, yunet.TOP_K, 10)
    assert np.all(np.diff(outputs["scores"], axis=1) <= 0)  # best first


@pytest.mark.parametrize("input_hw", [INPUT_HW, (256, 320)])
def test_decoding_matches_opencv_face_detector_yn(runtime, plugin, photos, yunet_path: Path, input_hw) -> None:
    """The whole engine path (uint8 input, preprocessing in the graph) against OpenCV's own decoder."""
    thresholds = plugin.default_thresholds
    photos = np.stack([cv2.resize(p, input_hw[::-1]) for p in photos]) if input_hw != INPUT_HW else photos
    dets = plugin.to_detections(runtime.run(photos), input_hw, thresholds)
    assert sum(len(d) for d in dets) >= len(photos)
    original = yunet_path.parent / "original" / yunet.WEIGHTS.filename
    reference = cv2.FaceDetectorYN.create(
        str(original), "", input_hw[::-1], thresholds.score_threshold, thresholds.nms_iou, thresholds.top_k
    )
    for image, det in zip(photos, dets):
        _, ref = reference.detect(image)
        ref = np.zeros((0, 15), np.float32) if ref is None else ref[np.argsort(-ref[:, 14])]
        assert len(det) == len(ref)
        xywh = np.concatenate([det.boxes[:, :2], det.boxes[:, 2:] - det.boxes[:, :2]], axis=1)
        np.testing.assert_allclose(xywh, ref[:, :4], atol=0.05)
        np.testing.assert_allclose(det.landmarks.reshape(-1, 10), ref[:, 4:14], atol=0.05)
        np.testing.assert_allclose(det.scores, ref[:, 14], atol=1e-4)


def test_patch_refuses_an_unexpected_graph(tmp_path: Path, yunet_path: Path) -> None:
    with pytest.raises(ValueError, match="expected 3 Reshape"):
        yunet.patch_for_batching(yunet_path, tmp_path / "again.onnx")  # already patched: [0,-1,k]
