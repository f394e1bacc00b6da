"""Live cameras through real RTSP servers (GStreamer's, streaming vtest.avi as 1280x720 H.264 at
25 fps, each frame stamped with when it was sent) and the real broker: frames stay fresh, a camera
that drops comes back by itself while the others stream on, and a bad source is a state, never a
dead producer. Credentials in a source's URL appear nowhere."""

import time
from pathlib import Path

import cv2
import numpy as np
import pytest
from helpers.fault import keep_report
from helpers.http import free_port, get, scrape
from helpers.kafka import read_topic
from helpers.producer import sent, start_producer, stop_producer, wait_until
from helpers.prometheus import check_metrics
from helpers.rtsp import SilentPort, staleness_ms

from facestream.producers.config import ProducerConfig
from facestream.producers.live import LiveSettings, LiveSource
from facestream.producers.streamer import Streamer
from facestream.schemas import unpack_camera_status, unpack_frame


def frames_of(bootstrap: str, topic: str, expected: int = 0) -> list:
    return [unpack_frame(r.value()) for r in read_topic(bootstrap, topic, expected, timeout_s=10.0)]


def image(frame) -> np.ndarray:
    return cv2.imdecode(np.frombuffer(frame.data, np.uint8), cv2.IMREAD_COLOR)


@pytest.mark.alone  # bounds on time
def test_frames_of_a_25_fps_stream_sent_at_5_fps_stay_fresh_for_half_a_minute(
    bootstrap: str, topics: dict, rtsp_cameras
) -> None:
    # Reading one picture per frame due fell 0.8 s further behind every second (24 s at p50 after a minute);
    # half a minute of 150 frames shows a trend of a millisecond a second.
    camera = rtsp_cameras()
    config = ProducerConfig(
        fps=5.0,
        frames_topic=topics["frames"],
        max_frames=160,
        stats_interval_s=30.0,
        status_topic=f"{topics['frames']}.status",
    )
    stats = Streamer([("street", camera.url)], config, bootstrap=bootstrap).run()
    assert stats.acked == 160
    frames = frames_of(bootstrap, topics["frames"], 160)
    ages = [staleness_ms(image(f), f.capture_ts_ns) for f in frames]
    readable = np.array([a for a in ages if a is not None])
    times_s = np.array([f.capture_ts_ns for f, a in zip(frames, ages) if a is not None]) / 1e9
    span_s = times_s[-1] - times_s[0]
    slope_ms_per_s = np.polyfit(times_s - times_s[0], readable, 1)[0]
    p50, p99 = np.percentile(readable, [50, 99])
    keep_report(
        {
            "live freshness": f"{len(readable)} frames over {span_s:.0f} s",
            "age p50 ms": round(p50),
            "p99 ms": round(p99),
            "max ms": round(readable.max()),
            "trend ms/s": round(slope_ms_per_s, 2),
        }
    )
    assert len(readable) >= 0.99 * len(frames), "the stamps must survive H.264 and JPEG"
    assert span_s >= 30.0
    assert p99 < 500.0, (p50, p99)
    assert abs(slope_ms_per_s) < 1.0, slope_ms_per_s  # not growing: under 30 ms over the half minute
    assert abs(np.median(readable[-40:]) - np.median(readable[:40])) < 50.0


@pytest.mark.alone  # bounds on time
def test_a_camera_whose_server_dies_comes_back_by_itself_and_the_other_streams_on(
    bootstrap: str, topics: dict, rtsp_cameras, tmp_path: Path
) -> None:
    door, yard = rtsp_cameras(), rtsp_cameras()
    port, log, status_topic = free_port(), tmp_path / "producer.log", f"{topics['frames']}.status"
    producer = start_producer(
        [("door", door.url), ("yard", yard.url)],
        log,
        fps=5.0,
        frames_topic=topics["frames"],
        status_topic=status_topic,
        http_port=port,
        stats_interval_s=1.0,
    )
    try:
        wait_until(lambda: get(port, "/readyz")[0] == 200 and sent(port, "door") >= 10, 30, "door to stream")
        killed = door.kill()
        time.sleep(20.0)
        before = sent(port, "door")
        door.start()
        back = time.time()
        resumed = wait_until(lambda: sent(port, "door") > before, 30, "door to resume")
        time.sleep(3.0)
    finally:
        output = stop_producer(producer, log)
    frames = frames_of(bootstrap, topics["frames"])
    door_times = np.array([f.capture_ts_ns for f in frames if f.camera_id == "door"]) / 1e9
    yard_times = np.array(sorted(f.capture_ts_ns for f in frames if f.camera_id == "yard")) / 1e9
    first_back = door_times[door_times > back].min()
    keep_report(
        {
            "live reconnect": "server down 20 s",
            "first frame after its return s": round(first_back - back, 2),
            "other camera's longest gap s": round(np.diff(yard_times).max(), 2),
        }
    )
    attempts = "\n".join(line for line in output.splitlines() if "source door" in line)  # why, if slow
    assert first_back - back < 10.0 and resumed - back < 10.0, attempts[-3000:]
    assert not any(killed + 1.0 < t < back for t in door_times)  # nothing stale out of a buffer meanwhile
    assert np.diff(yard_times).max() < 1.0  # the other camera never stopped
    states = [
        s.state
        for s in map(unpack_camera_status, (r.value() for r in read_topic(bootstrap, status_topic, 0, timeout_s=10)))
        if s.camera_id == "door"
    ]
    assert states[0] in ("connecting", "streaming") and "reconnecting" in states and states[-1] == "stopped"
    assert states[states.index("reconnecting") :].count("streaming") >= 1
    assert "door=" in output and "[reconnecting, attempt" in output


def test_bad_sources_are_counted_states_and_the_producer_streams_on(
    bootstrap: str, topics: dict, rtsp_cameras, tmp_path: Path
) -> None:
    good = rtsp_cameras()
    locked = rtsp_cameras("--credentials", "viewer:s3cret-pass")
    silent = SilentPort()
    cameras = [
        ("good", good.url),
        ("refused", f"rtsp://127.0.0.1:{free_port()}/stream"),
        ("silent", silent.url),
        ("locked", locked.url_with("viewer:s3cret-pass")),
        ("wrong", locked.url_with("viewer:not-the-pass")),
    ]
    port, log, status_topic = free_port(), tmp_path / "producer.log", f"{topics['frames']}.status"
    producer = start_producer(
        cameras,
        log,
        fps=5.0,
        frames_topic=topics["frames"],
        status_topic=status_topic,
        http_port=port,
        open_timeout_s=2.0,
        stats_interval_s=1.0,
    )
    try:
        wait_until(
            lambda: sent(port, "good") >= 40 and sent(port, "locked") >= 10,
            60,
            "the cameras to stream",
            lambda: f"sent: { ({c: sent(port, c) for c, _ in cameras}) }\n{log.read_text(errors='replace')[-3000:]}",
        )
        metrics = scrape(port)
        assert producer.poll() is None
        check_metrics(metrics)
    finally:
        output = stop_producer(producer, log)
        silent.close()
    for camera, state in [
        ("good", "streaming"),
        ("locked", "streaming"),
        ("refused", "reconnecting"),
        ("silent", "reconnecting"),
        ("wrong", "reconnecting"),
    ]:
        assert f'facestream_producer_camera_state{{camera="{camera}",state="{state}"}} 1.0' in metrics, camera
    statuses = [unpack_camera_status(r.value()) for r in read_topic(bootstrap, status_topic, 0, timeout_s=10)]
    errors = {s.camera_id: s.error for s in statuses if s.state == "reconnecting"}
    assert errors["refused"] == "Connection refused"
    assert errors["silent"] == "no answer within 2 s (timed out)"
    assert "401" in errors["wrong"]
    assert "refused=0 [reconnecting, attempt" in output and "Connection refused" in output
    said = output + metrics + "".join(s.source + (s.error or "") for s in statuses)
    assert "s3cret-pass" not in said and "not-the-pass" not in said
    assert "rtsp://***@127.0.0.1" in said


def test_a_camera_that_changes_its_resolution_streams_on_at_the_new_size(
    bootstrap: str, topics: dict, rtsp_cameras, tmp_path: Path
) -> None:
    # A producer that reconnected after the change (a loaded machine's stall) once found the camera
    # server failing: a new client's media kept the first size in its caps and got frames of the
    # second (bench/rtsp_camera.py, fixed; the next test joins after the change on purpose).
    resized = rtsp_cameras("--resize-after-s", "4", "--resize", "640x360")
    port, log = free_port(), tmp_path / "producer.log"
    producer = start_producer(
        [("resized", resized.url)], log, fps=5.0, frames_topic=topics["frames"], http_port=port, stats_interval_s=1.0
    )
    try:
        wait_until(lambda: sent(port, "resized") >= 40, 60, "the camera to stream", lambda: log.read_text()[-3000:])
        metrics = scrape(port)
    finally:
        output = stop_producer(producer, log)
    assert 'facestream_producer_camera_state{camera="resized",state="streaming"} 1.0' in metrics
    assert 'facestream_producer_resolution_changes_total{camera="resized"} 1.0' in metrics
    sizes = {(f.width, f.height) for f in frames_of(bootstrap, topics["frames"])}
    assert sizes == {(1280, 720), (640, 360)}
    assert "resolution changed from 1280x720 to 640x360" in output


def test_a_producer_that_connects_after_the_camera_changed_its_resolution_streams_at_the_new_size(
    bootstrap: str, topics: dict, rtsp_cameras, tmp_path: Path
) -> None:
    resized = rtsp_cameras("--resize-after-s", "1", "--resize", "640x360")
    time.sleep(4)  # the change made before anyone watches
    port, log = free_port(), tmp_path / "producer.log"
    producer = start_producer([("late", resized.url)], log, fps=5.0, frames_topic=topics["frames"], http_port=port)
    try:
        wait_until(lambda: sent(port, "late") >= 20, 60, "the camera to stream", lambda: log.read_text()[-3000:])
    finally:
        stop_producer(producer, log)
    assert {(f.width, f.height) for f in frames_of(bootstrap, topics["frames"])} == {(640, 360)}


def test_a_producer_whose_only_camera_is_down_is_alive_but_not_ready(topics: dict, tmp_path: Path) -> None:
    port, log = free_port(), tmp_path / "producer.log"
    url = f"rtsp://127.0.0.1:{free_port()}/stream"
    producer = start_producer(
        [("gone", url)],
        log,
        fps=5.0,
        frames_topic=topics["frames"],
        status_topic=f"{topics['frames']}.status",
        http_port=port,
    )
    try:
        wait_until(lambda: get(port, "/healthz")[0] == 200, 30, "the producer to serve /healthz")
        time.sleep(2.0)
        status, body = get(port, "/readyz")
        assert (status, body) == (503, {"ready": False, "checks": {"camera_streaming": False}})
        assert producer.poll() is None
    finally:
        output = stop_producer(producer, log)
    assert "gone=0 [stopped: Connection refused]" in output


def test_auto_decoding_takes_keyframes_only_when_they_come_as_often_as_frames_are_sent(rtsp_cameras) -> None:
    camera = rtsp_cameras("--keyframe-s", "0.5")  # two keyframes a second
    sources = {fps: LiveSource(camera.url, LiveSettings(decode="auto", fps=fps)).start() for fps in (2.0, 5.0)}
    try:
        time.sleep(5.0)
        before = {fps: source.status().decoded for fps, source in sources.items()}
        time.sleep(3.0)
        rates = {fps: (source.status().decoded - before[fps]) / 3.0 for fps, source in sources.items()}
        keyframes_only = {fps: source.status().keyframes_only for fps, source in sources.items()}
    finally:
        for source in sources.values():
            source.stop()
    assert keyframes_only == {2.0: True, 5.0: False}
    assert 1.3 <= rates[2.0] <= 2.7 and rates[5.0] >= 23, rates  # 2 keyframes a second; all 25 pictures
