"""An alerting worker as the child process a deployment runs, on a test's own topics, the alerts it
publishes, and what it needs: footage of the sample photos and enrolled people (see ``pythonpath`` in
pyproject)."""

import shutil
import signal
import subprocess
import time
import uuid
from pathlib import Path

import cv2
import numpy as np
from click.testing import CliRunner

from facestream import kafka_reading, kafka_topics
from facestream.alert_store.config import AlertStoreConfig
from facestream.alerting.config import AlertingConfig, alerting_command
from facestream.dashboard.config import DashboardConfig
from facestream.schemas import Alert, alert_id_for, unpack_alert
from facestream.tools.cli import cli


def alerting(names: dict, log: Path, env: dict | None = None, **changes) -> subprocess.Popen:
    """An alerting worker on the test's topics (``env``: its environment, if not this process's), its
    output in ``log``."""
    config = AlertingConfig(
        group=names["alerting"],
        detections_topic=names["detections"],
        poses_topic=names.get("poses", f"{names['alerting']}.poses"),  # the test's own, even when unused
        status_topic=names.get("status", f"{names['alerting']}.status"),
        alerts_topic=names["alerts"],
        gallery_topic=names["gallery"],
        dead_letter_topic=f"{names['alerting']}.dlq",
        stats_interval_s=1.0,
        **changes,
    )
    with open(log, "wb") as out:  # the child keeps its own handle
        return subprocess.Popen(alerting_command(config), stdout=out, stderr=subprocess.STDOUT, env=env)


def alerts_of(bootstrap: str, names: dict) -> list[Alert]:
    """Every alert on the test's topic, read up to the topic's end as of the call: never a short read,
    however slow the machine is to hand the reader its partitions."""
    return [unpack_alert(r.value()) for r in kafka_reading.read_to_end(names["alerts"], bootstrap)]


def wait_for(bootstrap: str, names: dict, done, timeout_s: float = 60.0) -> list[Alert]:
    """The alerts on the topic once ``done(alerts)`` holds (and 2 s more, for any extra)."""
    deadline = time.monotonic() + timeout_s
    while not done(alerts_of(bootstrap, names)) and time.monotonic() < deadline:
        time.sleep(0.5)
    time.sleep(2.0)
    return alerts_of(bootstrap, names)


def stop(worker: subprocess.Popen, log: Path) -> None:
    """SIGTERM, as an orchestrator stops a worker: it must stop cleanly."""
    worker.send_signal(signal.SIGTERM)
    worker.wait(timeout=30)
    assert worker.returncode in (0, -signal.SIGTERM), log.read_text(errors="replace")[-3000:]


def alerts_until(
    bootstrap: str, names: dict, worker: subprocess.Popen, log: Path, done, timeout_s: float = 60.0
) -> list[Alert]:
    """The alerts once ``done(alerts)`` holds; then the worker stops."""
    try:
        return wait_for(bootstrap, names, done, timeout_s)
    finally:
        stop(worker, log)


def documented_ids(alert: Alert, events: list) -> set[str]:
    """The ids ``alert`` may have by the rule schemas/README.md gives for its kind, recomputed from the
    events a real run produced (the opening event: the one of its camera captured at its start)."""
    opener = [e for e in events if e.camera_id == alert.camera_id and e.capture_ts_ns == alert.started_ts_ns]
    zone = "" if alert.zone is None else f"@{alert.zone}"
    if alert.kind in ("stranger", "person_seen"):
        openings = {f"{e.event_id}#{i}" for e in opener for i in range(len(e.faces))}
    elif alert.kind == "crowd":
        openings = {f"{e.event_id}{zone}" for e in opener}
    elif alert.kind == "camera_offline":
        openings = {str(alert.started_ts_ns)}
    else:
        raise ValueError(f"{alert.kind}: its id names the rule's own track count, which no record carries")
    return {alert_id_for(alert.camera_id, alert.kind, opening) for opening in openings}


def states(alerts: list[Alert], camera: str, kind: str) -> list[str]:
    return [a.state for a in alerts if a.camera_id == camera and a.kind == kind]


def ended(camera: str, kind: str):
    return lambda alerts: "end" in states(alerts, camera, kind)


def alert_record(alert) -> tuple:
    """What a reader tells alert records apart by: the alert, its state, and the frame and count behind it."""
    return alert.alert_id, alert.state, alert.updated_ts_ns, alert.count, alert.ended_ts_ns


def pipeline_names(prefix: str, bootstrap: str) -> dict[str, str]:
    """A test's own topics (frames, detections and dead letters made), detector group and alerting app id."""
    tag = f"{prefix}-{uuid.uuid4().hex[:10]}"
    names = {part: f"{tag}.{part}" for part in ("frames", "detections", "dlq", "alerts", "gallery")}
    kafka_topics.ensure_topics({names["frames"]: 2, names["detections"]: 2, names["dlq"]: 1}, bootstrap)
    return {**names, "group": f"{tag}.detector", "alerting": f"{tag}.alerting"}


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


def dashboard_on(names: dict, port: int, database: str, **changes) -> DashboardConfig:
    """The dashboard's settings for a test's pipeline topics (``pipeline_names``; poses and status beside
    the alerts unless named), its page on ``port``."""
    return DashboardConfig(
        http_port=port,
        database=database,
        frames_topic=names["frames"],
        detections_topic=names["detections"],
        alerts_topic=names["alerts"],
        gallery_topic=names["gallery"],
        poses_topic=names.get("poses", f"{names['alerts']}.poses"),
        status_topic=names.get("status", f"{names['alerts']}.status"),
        **changes,
    )


def store_on(names: dict, database: str, **changes) -> AlertStoreConfig:
    """The alert store's settings for a test's pipeline topics (``pipeline_names``), into ``database``."""
    return AlertStoreConfig(
        database=database,
        group=f"{names['group']}.store",
        alerts_topic=names["alerts"],
        detections_topic=names["detections"],
        frames_topic=names["frames"],
        dead_letter_topic=names["dlq"],
        **changes,
    )
