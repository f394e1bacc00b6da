"""Alerts from real photos through the real broker: the detector with embeddings, the gallery, and
an alerting worker, each the command a deployment runs."""

import shutil
import signal
import subprocess
import time
import uuid
from pathlib import Path

import cv2
import numpy as np
import pytest
from click.testing import CliRunner
from kafka_helpers import detector_config, photos_to, read_topic, run_service

from facestream import kafka_clients
from facestream.alerting.config import AlertingConfig, alerting_command
from facestream.detector_service.config import detector_command
from facestream.schemas import Alert, unpack_alert
from facestream.tools.cli import cli

FPS = 2.0


@pytest.fixture
def names(bootstrap: str) -> dict[str, str]:
    tag = uuid.uuid4().hex[:10]
    names = {part: f"a-{tag}.{part}" for part in ("frames", "detections", "dlq", "alerts", "gallery")}
    kafka_clients.ensure_topics({names["frames"]: 2, names["detections"]: 2, names["dlq"]: 1}, bootstrap)
    return {**names, "group": f"a-{tag}.detector", "alerting": f"a-{tag}.alerting"}


def scene(folder: Path, photos: list[tuple[Path, int]], blanks: int) -> Path:
    """A camera's footage as numbered files: each photo repeated, then empty frames (time goes on)."""
    folder.mkdir()
    index = 0
    for photo, times in photos:
        for _ in range(times):
            shutil.copy(photo, folder / f"{index:03d}.jpg")
            index += 1
    for _ in range(blanks):
        cv2.imwrite(str(folder / f"{index:03d}.jpg"), np.full((480, 640, 3), 100, np.uint8))
        index += 1
    return folder


def enrol(names: dict, name: str, photo: Path) -> None:
    result = CliRunner().invoke(
        cli, ["gallery", "enroll", "--name", name, "--topic", names["gallery"], "--provider", "cpu", str(photo)]
    )
    assert result.exit_code == 0, result.output


def detect(names: dict) -> str:
    config = detector_config(
        {"frames": names["frames"], "detections": names["detections"], "dlq": names["dlq"], "group": names["group"]},
        embedder="sface",
        batch=4,
    )
    return run_service(detector_command(config))


def alerting(names: dict, **changes) -> subprocess.Popen:
    config = AlertingConfig(
        group=names["alerting"],
        detections_topic=names["detections"],
        alerts_topic=names["alerts"],
        gallery_topic=names["gallery"],
        stats_interval=1.0,
        **changes,
    )
    return subprocess.Popen(alerting_command(config), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def alerts_until(bootstrap: str, names: dict, worker: subprocess.Popen, done, timeout_s: float = 60.0) -> list[Alert]:
    """The alerts on the topic until ``done(alerts)`` holds (then 2 s more for any extra), then the worker stops."""
    alerts, deadline = [], time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline and worker.poll() is None:
            alerts = [unpack_alert(r.value()) for r in read_topic(bootstrap, names["alerts"], 0, timeout_s=1.0)]
            if done(alerts):
                time.sleep(2.0)
                alerts = [unpack_alert(r.value()) for r in read_topic(bootstrap, names["alerts"], 0, timeout_s=1.0)]
                break
    finally:
        worker.send_signal(signal.SIGTERM)
        output = worker.communicate(timeout=30)[0]
    assert worker.returncode in (0, -signal.SIGTERM), output[-3000:]
    return alerts


def states(alerts: list[Alert], camera: str, kind: str) -> list[str]:
    return [a.state for a in alerts if a.camera_id == camera and a.kind == kind]


def test_one_stranger_alert_for_the_stranger_only(
    names: dict, bootstrap: str, sample_dir: Path, tmp_path: Path
) -> None:
    enrol(names, "Barack Obama", sample_dir / "obama.jpg")
    known = scene(tmp_path / "known", [(sample_dir / "obama2.jpg", 3), (sample_dir / "obama3.jpg", 3)], 12)
    stranger = scene(tmp_path / "stranger", [(sample_dir / "biden.jpg", 6)], 12)
    photos_to(names["frames"], {"porch": known, "gate": stranger}, fps=FPS, max_width=0)
    detect(names)
    worker = alerting(names, rules="stranger")
    alerts = alerts_until(bootstrap, names, worker, lambda found: "end" in states(found, "gate", "stranger"))
    assert states(alerts, "porch", "stranger") == []
    gate = [a for a in alerts if a.camera_id == "gate"]
    assert [a.state for a in gate][0] == "new" and [a.state for a in gate][-1] == "end"
    assert len({a.alert_id for a in gate}) == 1 and gate[-1].count == 6
    assert all(s.similarity < 0.5 for s in gate[-1].evidence)


def test_a_crowd_held_on_a_camera_opens_one_alert_that_ends(
    names: dict, bootstrap: str, sample_dir: Path, tmp_path: Path
) -> None:
    footage = scene(tmp_path / "hall", [(sample_dir / "breakingbad.jpg", 8)], 24)  # 12 s of an empty hall
    photos_to(names["frames"], {"hall": footage}, fps=FPS, max_width=0)
    detect(names)
    worker = alerting(names, rules="crowd", crowd={"min_faces": 2})
    alerts = alerts_until(bootstrap, names, worker, lambda found: "end" in states(found, "hall", "crowd"))
    crowd = [a for a in alerts if a.kind == "crowd"]
    assert crowd[0].state == "new" and crowd[-1].state == "end" and len({a.alert_id for a in crowd}) == 1
    assert crowd[-1].count == 2 and crowd[-1].ended_ts_ns > crowd[0].started_ts_ns


def test_replayed_events_make_no_new_alerts(names: dict, bootstrap: str, sample_dir: Path, tmp_path: Path) -> None:
    footage = scene(tmp_path / "gate", [(sample_dir / "biden.jpg", 4)], 12)
    photos_to(names["frames"], {"gate": footage}, fps=FPS, max_width=0)
    detect(names)
    events = read_topic(bootstrap, names["detections"], 16)
    producer = kafka_clients.producer("test-replay")
    for record in events:  # the same events again, as at-least-once delivery may bring them
        producer.produce(names["detections"], key=record.key(), value=record.value())
    assert producer.flush(30) == 0
    worker = alerting(names, rules="stranger")
    alerts = alerts_until(bootstrap, names, worker, lambda found: "end" in states(found, "gate", "stranger"))
    assert [a.state for a in alerts][0] == "new" and [a.state for a in alerts].count("new") == 1
    assert [a.state for a in alerts].count("end") == 1 and len({a.alert_id for a in alerts}) == 1
