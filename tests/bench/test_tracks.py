"""The tracks benchmark's ground truth and scoring: who is in view, and a camera's faces through the real
detector (YuNet + SFace on the CPU) and the tracker, against where they were drawn."""

import numpy as np

from bench.tracks import (
    CAMERAS,
    Cutout,
    Walk,
    _backgrounds,
    _faces,
    _stream,
    alerts_per_visit,
    cutouts,
    draw,
    placed_alerts,
    score,
)
from facestream.alerting.rules.face_tracks import FaceTrackSettings
from facestream.gallery import Gallery


def square(value: int) -> Cutout:
    mask = np.zeros((100, 100), np.float32)
    mask[10:90, 10:90] = 1.0
    return Cutout(np.full((100, 100, 3), value, np.uint8), mask, (30.0, 30.0, 70.0, 70.0))


def test_a_face_behind_a_later_walker_is_hidden_and_one_out_of_the_picture_half_in_view() -> None:
    cuts = {"a": square(50), "b": square(200)}
    walks = (Walk("a", (200, 200), (200, 200), 100, 100), Walk("b", (210, 200), (210, 200), 100, 100))
    frame, truth = draw(np.zeros((480, 640, 3), np.uint8), walks, cuts, 1.0)
    assert [(person, round(hidden, 2)) for person, _, hidden in truth] == [("a", 1.0), ("b", 0.0)]
    assert frame[200, 210].tolist() == [200, 200, 200]  # b is drawn over a
    edge = (Walk("a", (0, 200), (0, 200), 100, 100),)
    _, ((_, box, hidden),) = draw(np.zeros((480, 640, 3), np.uint8), edge, cuts, 1.0)
    assert box == (-20.0, 180.0, 20.0, 220.0) and round(hidden, 2) == 0.5


def test_a_camera_of_real_faces_is_tracked_without_switches_one_stranger_alert_a_visit() -> None:
    """The detector as it runs by default (faces embedded per track), its events lent their tracks'
    embeddings as the worker lends them."""
    from facestream.detector_service.config import DetectorConfig
    from facestream.detector_service.service import build_processor

    processor = build_processor(DetectorConfig(model="yunet", embedder="sface", decode="cpu", provider="cpu", batch=16))
    try:
        cast = {person: (photo, box) for person, (photo, box, _) in _faces(processor).items()}
        events, truth = _stream(processor, "lobby", CAMERAS["lobby"], cutouts(cast), _backgrounds(), 1, 5)
    finally:
        processor.close()
    found = score(events, truth, FaceTrackSettings(), 5)
    # two people crossing behind a third, one of them stepping out of view and back: one track each
    assert found["id_switches"] == 0 and found["idf1"] >= 0.9 and found["false"] <= 1
    # three strangers (nobody enrolled), each in view once: one stranger alert each
    alerts = alerts_per_visit([(person, last) for person, last, _ in placed_alerts(events, truth, Gallery())])
    assert alerts["alerts"] == {walk.person: {"stranger": 1} for walk in CAMERAS["lobby"]}
    assert alerts["unplaced_alerts"] == 0
