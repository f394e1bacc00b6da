"""A running detector's Prometheus metrics (counters move, the CPU fallback is visible there), and its
/healthz and /readyz: alive from the start, ready once warmed up and assigned partitions."""

import re
import subprocess
import time
from pathlib import Path

import cv2
import numpy as np
import pytest
from helpers.http import free_port, get, scrape
from helpers.kafka import detector_config
from helpers.prometheus import check_metrics

from facestream.detector_service.config import PoseConfig, detector_command, pose_command
from facestream.schemas import Frame, pack_frame


def scrape_until(port: int, needle: str, timeout_s: float = 60.0) -> str:
    """The metrics page once it contains ``needle`` (the detector starts, then counts, asynchronously)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            text = scrape(port)
            if needle in text:
                return text
        except OSError:  # not listening yet
            pass
        time.sleep(0.3)
    raise AssertionError(f"{needle!r} not in the metrics within {timeout_s:.0f} s")


def listening_on(port: int) -> list[str]:
    """The IPv4 addresses a socket listens on at ``port`` (Linux's /proc/net/tcp: hex address:port, state 0A)."""
    found = []
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, state = line.split()[1], line.split()[3]
        address, hex_port = local.split(":")
        if state == "0A" and int(hex_port, 16) == port:
            found.append(".".join(str(int(address[i : i + 2], 16)) for i in (6, 4, 2, 0)))
    return found


@pytest.mark.prometheus  # promtool checks the exposition
def test_metrics_show_counters_and_the_fallback(topics: dict, produce_raw, yunet_path) -> None:
    port = free_port()
    detector = subprocess.Popen(
        detector_command(detector_config(topics, http_port=port, stop_after_idle_s=30.0)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        scrape_until(port, "facestream_frames_total 0.0")
        image = cv2.imencode(".jpg", np.full((48, 64, 3), 90, np.uint8))[1].tobytes()
        for seq in range(3):
            produce_raw(topics["frames"], b"cam", pack_frame(Frame("cam", seq, 1, 64, 48, image)))
        produce_raw(topics["frames"], b"cam", b"not msgpack")
        scrape_until(port, "facestream_detection_events_total 3.0")
        text = scrape_until(port, "facestream_dead_letters_total 1.0")
        assert "facestream_frames_total 4.0" in text
        assert 'facestream_dead_letters_by_reason_total{reason="schema"} 1.0' in text
        provider = (
            'facestream_inference_provider{fallback="true",model="yunet v2023mar on cpu, input 640x480",provider="cpu"}'
        )
        assert f"{provider} 1.0" in text
        assert (
            'facestream_decoder{decoder="cpu",fallback="false"} 1.0' in text
        )  # no GPU engine: CPU decoding is no fallback
        assert 'facestream_stage_seconds_total{stage="infer"}' in text
        assert 'facestream_stage_seconds_total{stage="decode"}' in text
        assert listening_on(port) == ["127.0.0.1"]  # this machine only, unless --metrics-host says otherwise
        # Distributions: the frames were captured in 1970, so their events came late, over every bound.
        assert "facestream_capture_to_event_seconds_count 3.0" in text
        assert 'facestream_capture_to_event_seconds_bucket{le="300.0"} 0.0' in text
        assert re.search(r"^facestream_batch_frames_count [1-9]", text, re.M)
        assert re.search(r"^facestream_batch_seconds_bucket\{le=\"\+Inf\"\} [1-9]", text, re.M)
        # The lag of the partitions this member holds, as its client measures it (every 5 s).
        text = scrape_until(port, f'facestream_consumer_lag{{group="{topics["group"]}"')
        check_metrics(text)
    finally:
        detector.terminate()
        detector.wait(timeout=60)


def test_healthz_answers_during_warm_up_and_readyz_once_warm_and_assigned(topics: dict, yunet_path) -> None:
    # A long warm-up (YuNet at 2560x1440, batch 16, one thread: seconds): alive but not ready meanwhile.
    port = free_port()
    config = detector_config(
        topics, http_port=port, stop_after_idle_s=30.0, batch=16, input_size=(2560, 1440), ort_threads=1
    )
    detector = subprocess.Popen(detector_command(config), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while get(port, "/healthz")[0] != 200:
            assert time.monotonic() < deadline and detector.poll() is None
            time.sleep(0.05)
        status, body = get(port, "/readyz")
        assert status == 503 and body["checks"] == {"model_warm": False, "partitions_assigned": False}, body
        while get(port, "/readyz")[0] != 200:
            assert time.monotonic() < deadline and detector.poll() is None
            time.sleep(0.2)
        assert get(port, "/readyz")[1]["checks"] == {"model_warm": True, "partitions_assigned": True}
        assert "facestream_frames_total 0.0" in scrape(port)
    finally:
        detector.terminate()
        detector.wait(timeout=60)


def test_the_pose_service_counts_pose_events_by_their_name(topics: dict, produce_raw) -> None:
    # It used to export the detector's names and help ("facestream_events_total", "Detection events ...").
    port = free_port()
    config = PoseConfig(
        group=topics["group"],
        frames_topic=topics["frames"],
        detections_topic=topics["detections"],
        dead_letter_topic=topics["dlq"],
        start_at="earliest",
        stop_after_idle_s=30.0,
        http_port=port,
    )
    service = subprocess.Popen(pose_command(config), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        scrape_until(port, "facestream_frames_total 0.0", timeout_s=120)
        image = cv2.imencode(".jpg", np.full((192, 256, 3), 90, np.uint8))[1].tobytes()
        produce_raw(topics["frames"], b"cam", pack_frame(Frame("cam", 0, 1, 256, 192, image)))
        text = scrape_until(port, "facestream_pose_events_total 1.0")
        assert "# HELP facestream_pose_events_total Pose events acknowledged by the broker" in text
        assert "facestream_detection_events" not in text
    finally:
        service.terminate()
        service.wait(timeout=60)
