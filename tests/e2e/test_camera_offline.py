"""camera_offline alerts from real RTSP cameras through the real broker: a producer and an alerting
worker, each the command a deployment runs, and cameras whose servers are killed."""

import signal
import time
import uuid
from pathlib import Path

import pytest
from helpers.fault import keep_report
from helpers.http import free_port
from helpers.producer import sent, start_producer, wait_until
from helpers.worker import alerting, documented_ids, stop, wait_for

from facestream import kafka_topics

OFFLINE_AFTER_S = 5.0


@pytest.fixture
def names(bootstrap: str) -> dict[str, str]:
    tag = uuid.uuid4().hex[:10]
    names = {part: f"o-{tag}.{part}" for part in ("frames", "detections", "status", "alerts", "gallery")}
    kafka_topics.ensure_topics({names["frames"]: 2, names["status"]: 2}, bootstrap)
    return {**names, "alerting": f"o-{tag}.alerting"}


def offline(alerts: list, camera: str, since_ns: int = 0) -> list:
    """The camera's camera_offline records of alerts that opened after ``since_ns``."""
    return [a for a in alerts if a.camera_id == camera and a.kind == "camera_offline" and a.started_ts_ns >= since_ns]


@pytest.mark.alone  # bounds on time
def test_a_camera_whose_server_stops_is_offline_until_it_returns_and_a_dead_producer_takes_its_cameras_down(
    names: dict, bootstrap: str, rtsp_cameras, tmp_path: Path
) -> None:
    door, yard, shed = (rtsp_cameras("--size", "640x360") for _ in range(3))
    port, log = free_port(), tmp_path / "producer.log"
    producer = start_producer(
        [("door", door.url), ("yard", yard.url), ("shed", shed.url)],
        log,
        fps=2.0,
        frames_topic=names["frames"],
        status_topic=names["status"],
        status_interval_s=1.0,
        http_port=port,
    )
    worker = alerting(
        names, tmp_path / "alerting.log", rules="camera_offline", camera_offline={"offline_after_s": OFFLINE_AFTER_S}
    )
    try:
        wait_until(lambda: min(sent(port, c) for c in ("door", "yard", "shed")) >= 4, 30, "the cameras to stream")
        # A camera slow to send its first frame (more than OFFLINE_AFTER_S on a loaded machine) has an
        # alert of its own, "connecting, no frame sent", ended by its first frames: not this test's.
        since = time.time_ns()
        killed = door.kill()
        shed.kill()  # and never back
        time.sleep(20.0)
        door.start()
        alerts = wait_for(
            bootstrap, names, lambda found: [a.state for a in offline(found, "door", since)] == ["new", "end"]
        )
        assert [a.state for a in offline(alerts, "door", since)] == ["new", "end"]
        assert [a.state for a in offline(alerts, "shed", since)] == ["new"] and offline(alerts, "yard", since) == []
        opened, ended = offline(alerts, "door", since)
        assert opened.alert_id == ended.alert_id and opened.reason.startswith("reconnecting: ")
        assert opened.alert_id in documented_ids(opened, [])  # the contract's id, recomputed
        raised_after_s = opened.updated_ts_ns / 1e9 - killed
        assert OFFLINE_AFTER_S - 1 < raised_after_s < OFFLINE_AFTER_S + 3, raised_after_s
        assert ended.ended_ts_ns > killed * 1e9 + 20e9 and ended.reason == "frames again"
        producer.send_signal(signal.SIGKILL)  # the producer dies: its cameras go quiet
        died = time.time()
        alerts = wait_for(bootstrap, names, lambda found: len(offline(found, "yard", since)) == 1, timeout_s=30)
    finally:
        producer.kill()
        stop(worker, tmp_path / "alerting.log")
    (quiet,) = offline(alerts, "yard", since)
    assert quiet.state == "new" and quiet.reason.startswith("no word from its producer for ")
    assert [a.state for a in offline(alerts, "door", since)] == ["new", "end", "new"]
    assert [a.state for a in offline(alerts, "shed", since)] == ["new"]  # already open: not twice
    keep_report(
        {
            "camera offline": f"offline-after-s {OFFLINE_AFTER_S:g}",
            "server killed -> alert s": round(raised_after_s, 2),
            "producer killed -> alert s (worker's clock)": round(
                next(a for a in offline(alerts, "yard", since)).updated_ts_ns / 1e9 - died, 2
            ),
        }
    )
