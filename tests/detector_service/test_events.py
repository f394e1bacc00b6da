"""Events built from a batch's arrays are valid messages: the publisher packs them unchecked, so the
builders are checked here, with the schema's own reader."""

import numpy as np

from facestream.detector_service.events import Identity, build_events, build_pose_events
from facestream.detector_service.models.base import Detections
from facestream.schemas import Frame, ModelRef, pack_detection, pack_pose, unpack_detection, unpack_pose

YUNET = ModelRef("yunet", "2023mar", "8f23")
SFACE = ModelRef("sface", "2021dec", "0ba9")
MOVENET = ModelRef("movenet", "multipose-lightning", "1a2b")


def frames(count: int) -> list[Frame]:
    return [Frame(f"cam{i}", 100 + i, 1_000 + i, 640, 480, b"") for i in range(count)]


def test_face_events_from_arrays_read_back_as_built() -> None:
    rng = np.random.default_rng(7)
    counts = np.array([2, 0, 3])
    corners = rng.uniform(0, 300, (5, 2)).astype(np.float32)
    faces = Detections(
        boxes=np.concatenate([corners, corners + rng.uniform(5, 100, (5, 2))], axis=1).astype(np.float32),
        scores=np.array([0.99999, 0.5, 0.61, 1.0, 0.7], np.float32),
        landmarks=rng.uniform(0, 480, (5, 5, 2)).astype(np.float32),
    )
    vectors = rng.normal(size=(5, 128)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    events = build_events(frames(3), faces, counts, YUNET, SFACE, Identity(vectors))
    assert [len(e.faces) for e in events] == [2, 0, 3]
    for event in events:
        packed = pack_detection(event, check=False)
        assert packed == pack_detection(event) and unpack_detection(packed) == event


def test_pose_events_from_arrays_read_back_as_built() -> None:
    rng = np.random.default_rng(8)
    corners = rng.uniform(0, 300, (3, 2)).astype(np.float32)
    people = Detections(
        boxes=np.concatenate([corners, corners + 50], axis=1).astype(np.float32),
        scores=np.array([0.2, 0.9, 1.0], np.float32),
        landmarks=rng.uniform(0, 480, (3, 17, 2)).astype(np.float32),
        landmark_scores=rng.uniform(0, 1, (3, 17)).astype(np.float32),
    )
    events = build_pose_events(frames(2), people, np.array([1, 2]), MOVENET)
    for event in events:
        packed = pack_pose(event, check=False)
        assert packed == pack_pose(event) and unpack_pose(packed) == event
