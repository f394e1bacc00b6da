"""Fall alerts from real images through the real broker: a producer, the pose service (MoveNet on the
CPU) and an alerting worker, each the command a deployment runs."""

import json
import uuid
from pathlib import Path

import pytest
from helpers.fault import wait_for_line
from helpers.kafka import photos_to, read_topic, run_service
from helpers.worker import alerting, alerts_until, ended, states

from facestream import kafka_topics, samples
from facestream.detector_service.config import PoseConfig, pose_command
from facestream.schemas import unpack_pose

FPS = 5.0


@pytest.fixture
def names(bootstrap: str) -> dict[str, str]:
    tag = uuid.uuid4().hex[:10]
    names = {part: f"f-{tag}.{part}" for part in ("frames", "poses", "detections", "dlq", "alerts", "gallery")}
    kafka_topics.ensure_topics(
        {names["frames"]: 2, names["poses"]: 2, names["detections"]: 2, names["dlq"]: 1}, bootstrap
    )
    return {**names, "group": f"f-{tag}.pose", "alerting": f"f-{tag}.alerting"}


def poses(names: dict, **changes) -> str:
    """The pose service over the frames already sent, until 4 s without frames."""
    config = PoseConfig(
        group=names["group"],
        frames_topic=names["frames"],
        detections_topic=names["poses"],
        dead_letter_topic=names["dlq"],
        start_at="earliest",
        stop_after_idle_s=4.0,
        stats_interval_s=1.0,
        **changes,
    )
    return run_service(pose_command(config), timeout_s=300)


def test_a_player_going_down_and_staying_down_is_one_fall_alert(
    names: dict, bootstrap: str, sample_dir: Path, tmp_path: Path
) -> None:
    falling = samples.fall_footage(tmp_path / "court", fps=FPS)
    frames = len(list(falling.iterdir()))
    standing = tmp_path / "gym"  # the other photo, the same time long: two players, both upright
    standing.mkdir()
    for index in range(frames):
        (standing / f"{index:04d}.png").symlink_to(sample_dir / "basketball2.png")
    photos_to(names["frames"], {"court": falling, "gym": standing}, fps=FPS, max_width=0)
    log = poses(names, batch=4)
    frames *= 2
    assert f'"events": {frames}' in log, log[-2000:]
    gym = [
        e
        for e in map(unpack_pose, (r.value() for r in read_topic(bootstrap, names["poses"], frames)))
        if e.camera_id == "gym"
    ]
    assert all(len(e.persons) == 2 for e in gym)
    log_path = tmp_path / "alerting.log"
    worker = alerting(names, log_path, rules="fall")
    alerts = alerts_until(bootstrap, names, worker, log_path, ended("court", "fall"))
    assert states(alerts, "gym", "fall") == []
    court = [a for a in alerts if a.camera_id == "court" and a.kind == "fall"]
    assert court[0].state == "new" and court[-1].state == "end" and len({a.alert_id for a in court}) == 1, court
    assert [a.state for a in court].count("new") == 1 and court[-1].count == 1
    assert court[0].evidence and all(s.box is not None for s in court[0].evidence)
    # The alert opens once the player has been down for hold-s (2 s) since the first frame lying.
    assert 1.8e9 <= court[0].updated_ts_ns - court[0].started_ts_ns <= 2.6e9, court[0]


def test_pedestrians_walking_past_raise_no_fall(names: dict, bootstrap: str, sample_dir: Path, tmp_path: Path) -> None:
    # OpenCV's vtest.avi: people walking past a fixed camera; its first 40 s at its own 10 fps.
    photos_to(names["frames"], {"street": sample_dir / "vtest.avi"}, fps=10.0, max_width=0, max_frames=400)
    poses(names, batch=8)
    log_path = tmp_path / "alerting.log"
    worker = alerting(names, log_path, rules="fall")
    wait_for_line(log_path, "poses 400", timeout_s=120.0)  # every frame's pose event read
    alerts = alerts_until(bootstrap, names, worker, log_path, lambda alerts: True)
    assert states(alerts, "street", "fall") == [], alerts


def test_the_pose_service_at_a_third_of_the_rate_counts_and_announces_what_it_passed_over(
    names: dict, bootstrap: str, sample_dir: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "court"
    folder.mkdir()
    for index in range(9):
        (folder / f"{index:04d}.png").symlink_to(sample_dir / "basketball1.png")
    photos_to(names["frames"], {"court": folder}, max_width=0)
    log = poses(names, batch=4, every_nth=3)
    events = sorted(
        (unpack_pose(r.value()) for r in read_topic(bootstrap, names["poses"], 3)), key=lambda e: e.frame_seq
    )
    assert [(e.frame_seq, e.skipped_before) for e in events] == [(0, 0), (3, 2), (6, 2)]
    assert all(len(e.persons) == 2 for e in events)
    summary = json.loads(next(line for line in reversed(log.splitlines()) if line.startswith("{")))
    assert (summary["frames"], summary["events"], summary["skipped_nth"]) == (9, 3, 6)
    assert "one frame in 3 per camera" in log and "skipped-nth 6" in log
