"""The whole path on the real broker: producer -> frames -> detector -> detections (and dead letters)."""

import json
import sys
from pathlib import Path

import cv2
import msgpack
import numpy as np
import pytest
from helpers.jpeg import bomb
from helpers.kafka import committed_total, detector_args, detector_config, photos_to, read_topic, run_service

from facestream import samples
from facestream.detector_service.config import detector_command
from facestream.detector_service.models import yunet
from facestream.schemas import Frame, event_id_for, pack_frame, unpack_detection

# Sorted file order = frame_seq order of each camera (the producer starts at --start-seq 0).
EXPECTED = {
    "portraits": [("biden.jpg", 1), ("obama.jpg", 1), ("obama2.jpg", 1), ("obama3.jpg", 1)],
    "annotated": [("breakingbad.jpg", 2), ("einstein.jpg", 2), ("takeo.ppm", 1)],
}
INNER_LANDMARKS = slice(17, 68)  # brows, eyes, nose, mouth: the jaw line may run past a face box


def iou(a, b) -> float:
    w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - w * h
    return w * h / union


def inside(points: np.ndarray, box) -> np.ndarray:
    return (points[:, 0] >= box[0]) & (points[:, 0] <= box[2]) & (points[:, 1] >= box[1]) & (points[:, 1] <= box[3])


@pytest.fixture(scope="module")
def photo_run(bootstrap: str, sample_dir: Path, yunet_path: Path, tmp_path_factory) -> dict:
    """Produce the real photos as two cameras, run the detector over them once, collect the results."""
    import uuid

    from facestream import kafka_topics

    tag = uuid.uuid4().hex[:10]
    topics = {
        "frames": f"t-{tag}.frames",
        "detections": f"t-{tag}.detections",
        "dlq": f"t-{tag}.dlq",
        "group": f"t-{tag}.detector",
    }
    kafka_topics.ensure_topics({topics["frames"]: 2, topics["detections"]: 2, topics["dlq"]: 1}, bootstrap)
    cameras = {"portraits": samples.portraits_dir(), "annotated": samples.annotated_dir()}
    photos_to(topics["frames"], cameras, max_width=0)
    log = run_service(detector_command(detector_config(topics, batch=4)))
    frames = sum(len(v) for v in EXPECTED.values())
    records = read_topic(bootstrap, topics["detections"], frames)
    return {"topics": topics, "records": records, "frames": frames, "log": log}


def events_by_file(photo_run: dict) -> dict[str, object]:
    by_key = {}
    for record in photo_run["records"]:
        event = unpack_detection(record.value())
        assert record.key() == event.camera_id.encode()
        by_key[(event.camera_id, event.frame_seq)] = event
    return {name: by_key[(cam, seq)] for cam, files in EXPECTED.items() for seq, (name, _) in enumerate(files)}


def test_every_frame_has_exactly_one_event(photo_run: dict) -> None:
    events = [unpack_detection(r.value()) for r in photo_run["records"]]
    keys = [(e.camera_id, e.frame_seq) for e in events]
    assert len(events) == photo_run["frames"]
    assert sorted(keys) == sorted((cam, seq) for cam, files in EXPECTED.items() for seq in range(len(files)))
    assert len({e.event_id for e in events}) == len(events)
    for e in events:
        assert e.event_id == event_id_for(e.camera_id, e.frame_seq, e.model)
        assert e.model.name == "yunet" and e.model.weights_sha256 == yunet.WEIGHTS.sha256
        assert e.detect_ts_ns >= e.capture_ts_ns


def test_committed_offsets_equal_frames_produced(photo_run: dict, bootstrap: str) -> None:
    topics = photo_run["topics"]
    assert committed_total(bootstrap, topics["group"], topics["frames"]) == photo_run["frames"]


def test_face_counts_and_original_frame_sizes(photo_run: dict, sample_dir: Path) -> None:
    for name, event in events_by_file(photo_run).items():
        expected = dict(pair for files in EXPECTED.values() for pair in files)[name]
        height, width = cv2.imread(str(sample_dir / name)).shape[:2]
        assert (event.width, event.height) == (width, height), name
        assert len(event.faces) == expected, (name, event.faces)
        for face in event.faces:
            x0, y0, x1, y1 = face.box
            assert 0 <= x0 < x1 <= width and 0 <= y0 < y1 <= height
            assert len(face.landmarks) == 5


@pytest.mark.parametrize("reference", [samples.OBAMA_DLIB_HOG, samples.OBAMA_DLIB_CNN], ids=["hog", "cnn"])
def test_obama_box_matches_dlib_reference(photo_run: dict, reference: tuple[int, int, int, int]) -> None:
    top, right, bottom, left = reference
    (face,) = events_by_file(photo_run)["obama.jpg"].faces
    assert iou(face.box, (left, top, right, bottom)) >= 0.5


@pytest.mark.parametrize("name", ["einstein", "breakingbad", "takeo"])
def test_annotated_landmarks_fall_inside_a_detected_box(photo_run: dict, sample_dir: Path, name: str) -> None:
    points = samples.read_pts(sample_dir / f"{name}.pts")
    event = events_by_file(photo_run)[next(f for f, _ in EXPECTED["annotated"] if f.startswith(name))]
    best = max(event.faces, key=lambda face: inside(points, face.box).sum())
    assert inside(points[INNER_LANDMARKS], best.box).all()
    assert inside(points, best.box).mean() >= 0.85
    # YuNet's own eye landmarks sit near the annotated eye centres (iBUG points 37-42 and 43-48).
    eyes = np.array([points[36:42].mean(axis=0), points[42:48].mean(axis=0)])
    found = np.array(best.landmarks[:2])
    gap = np.linalg.norm(eyes[:, None] - found[None], axis=-1).min(axis=1)
    assert (gap < 0.1 * (best.box[2] - best.box[0])).all(), gap


def test_bad_input_goes_to_dead_letters(bootstrap: str, topics: dict, produce_raw, tmp_path: Path) -> None:
    frames = topics["frames"]

    def frame(seq: int, data: bytes, width: int, height: int) -> bytes:
        return pack_frame(Frame("cam", seq, 1, width, height, data))

    gradient = np.tile(np.linspace(0, 255, 4096, dtype=np.uint8), (3072, 1))
    huge = cv2.imencode(".jpg", cv2.merge([gradient] * 3))[1].tobytes()
    small = cv2.imencode(".jpg", np.full((48, 64, 3), 128, np.uint8))[1].tobytes()
    newer = msgpack.packb({"schema_version": 2, "camera_id": "cam"})
    cases = [  # (key, value, stage, words of the reason)
        (b"cam", b"", "schema", "empty payload"),
        (b"cam", b"\x00garbage\xff", "schema", "Frame"),
        (b"cam", newer, "schema", "schema_version"),
        (b"cam", frame(3, b"\xff\xd8\xff\xe0 truncated jpeg", 64, 48), "decode", "do not decode"),
        (b"cam", frame(4, small, 640, 480), "decode", "says 640x480, image is 64x48"),
        (None, frame(7, small, 64, 48), "key", "no key"),
        (b"cam", frame(8, bomb(65535, 65535), 16, 16), "limits", "JPEG header claims 65535x65535"),
    ]
    for key, value, _, _ in cases:
        produce_raw(frames, key, value)
    produce_raw(frames, b"cam", frame(5, small, 64, 48))
    produce_raw(frames, b"cam", frame(6, huge, 4096, 3072))

    # Settings from a config file and the environment, as a deployment would pass them.
    config = tmp_path / "facestream.toml"
    config.write_text("[detect]\nbatch = 3\n")
    log = run_service(
        [sys.executable, "-m", "facestream", "--config", str(config), "detect", *detector_args(topics)],
        env={"FACESTREAM_DETECT_MAX_WAIT_MS": "20"},
    )
    assert "batch 3, max wait 20 ms" in log

    dead = read_topic(bootstrap, topics["dlq"], len(cases))
    assert len(dead) == len(cases)
    by_value = {record.value(): dict(record.headers()) for record in dead}
    for _, value, stage, words in cases:
        headers = by_value[value]
        assert headers["facestream.stage"].decode() == stage
        assert words in headers["facestream.error"].decode()
        assert headers["facestream.source"].decode().startswith(f"{frames}/")
    events = [unpack_detection(r.value()) for r in read_topic(bootstrap, topics["detections"], 2)]
    assert sorted((e.frame_seq, e.width, e.height) for e in events) == [(5, 64, 48), (6, 4096, 3072)]
    assert committed_total(bootstrap, topics["group"], frames) == len(cases) + 2
    assert "dead-letters 7 (decode 2, key 1, limits 1, schema 3)" in log


def test_a_backlog_goes_in_full_batches(topics: dict, produce_raw) -> None:
    # A real bug: a batch taken while another was on the device asked for a single message, so a
    # detector behind by 35,000 frames ran batches of one. 40 waiting frames at batch 8: 5 batches, give or take.
    small = cv2.imencode(".jpg", np.full((48, 64, 3), 128, np.uint8))[1].tobytes()
    for seq in range(40):
        produce_raw(topics["frames"], b"cam", pack_frame(Frame("cam", seq, 1, 64, 48, small)))
    log = run_service(detector_command(detector_config(topics, batch=8)))
    summary = json.loads(next(line for line in reversed(log.splitlines()) if line.startswith("{")))
    assert summary["frames"] == 40
    assert summary["batches"] <= 10, f"{summary['batches']} batches for 40 waiting frames at batch 8"


def test_embeddings_travel_in_the_events(bootstrap: str, topics: dict) -> None:
    photos_to(topics["frames"], {"portraits": samples.portraits_dir()}, max_width=0)
    log = run_service(detector_command(detector_config(topics, batch=4, embedder="sface")))
    assert "embeddings sface v2021dec fp32 on cpu, aligned by landmarks" in log
    events = sorted(
        (unpack_detection(r.value()) for r in read_topic(bootstrap, topics["detections"], 4)), key=lambda e: e.frame_seq
    )
    by_name = dict(zip(sorted(p.name for p in samples.portraits_dir().iterdir()), events))
    vectors = {name: np.frombuffer(e.faces[0].embedding, "<f2").astype(np.float32) for name, e in by_name.items()}
    assert all(e.embedder.name == "sface" and len(e.faces[0].embedding) == 256 for e in events)
    assert vectors["obama.jpg"] @ vectors["obama2.jpg"] > 0.7 and vectors["obama.jpg"] @ vectors["biden.jpg"] < 0.3
