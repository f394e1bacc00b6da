"""A real Prometheus (Debian's) over running services, as an operator wires it (deploy/prometheus/):
it scrapes a producer, two detector replicas and an alerting worker, finds each one's series, and when
a replica dies it pages, first that the replica is down, then that the survivor falls behind. The
rules are the shipped ones on a test's clock (helpers/prometheus.py: times / 30, lag thresholds / 10).

The detectors run one inference and one decoding thread each, each replica on a core of its own; a
burst of frames measures what the pair answers a second here, and four cameras (one on each
partition) then stream at 0.7 of that, so that the pair keeps up and one alone does not: that is the
point the lag alert is for, and why the test runs alone. Each service's /metrics passes ``promtool
check metrics`` on the way."""

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest
from helpers.http import free_port, scrape
from helpers.kafka import detector_config
from helpers.prometheus import check_metrics, prometheus
from helpers.worker import alerting

from facestream import kafka_topics
from facestream.detector_service.config import detector_command
from facestream.producers.config import ProducerConfig, producer_command
from facestream.producers.placement import Placement

BURST = 480  # frames that measure what the two replicas answer a second on this machine
LOAD = 0.75  # the cameras' rate, as a share of that: under the pair's, over one replica's (about 0.55)
PARTITIONS = 4  # one camera on each (a placement list): each replica holds two of them
STEADY_S = 15


def until(what: str, check, timeout_s: float, detail=lambda: "") -> float:
    """Seconds until ``check()`` held; fails naming ``what`` after ``timeout_s``."""
    start = time.monotonic()
    while not check():
        assert time.monotonic() - start < timeout_s, f"no {what} within {timeout_s:.0f} s\n{detail()}"
        time.sleep(0.5)
    return time.monotonic() - start


def answering_rate(ports: list[int], logs) -> float:
    """Frames a second the replicas answer together through the middle of the burst (from a fifth to
    four fifths of it, read off their own /metrics: neither their start nor the producer's counts)."""
    samples = []
    start = time.monotonic()
    while not samples or samples[-1][1] < BURST * 0.8:
        assert time.monotonic() - start < 120, f"the burst not answered within 120 s\n{logs()}"
        taken = 0.0
        for port in ports:
            found = re.search(r"^facestream_frames_total (\S+)", scrape(port), re.M)
            taken += float(found[1]) if found else 0.0
        samples.append((time.monotonic(), taken))
        time.sleep(0.2)
    first = next(sample for sample in samples if sample[1] >= BURST * 0.2)
    return (samples[-1][1] - first[1]) / (samples[-1][0] - first[0])


@pytest.mark.alone
@pytest.mark.prometheus
def test_prometheus_sees_every_service_and_pages_when_a_replica_dies(
    bootstrap: str, topics: dict, sample_dir: Path, tmp_path: Path
) -> None:
    kafka_topics.ensure_topics({topics["frames"]: PARTITIONS}, bootstrap)
    placement = tmp_path / "placement.txt"
    cores = sorted(os.sched_getaffinity(0))

    def cameras(prefix: str) -> list[tuple[str, Path]]:
        """A camera on each partition: a load the two replicas share, and one replica alone takes over."""
        ids = [f"{prefix}-{place}" for place in range(PARTITIONS)]
        Placement.of(ids).write(placement)
        return [(camera, sample_dir / "portraits") for camera in ids]

    ports = {"producer": free_port(), "alerting": free_port(), "detectors": [free_port(), free_port()]}
    processes: list[subprocess.Popen] = []

    def started(command: list[str], name: str, core: int | None = None) -> subprocess.Popen:
        """A service in the background; on one ``core`` of its own if given (a replica, so that one
        alone has half the pair's processors, not the whole machine)."""
        pin = None if core is None else lambda: os.sched_setaffinity(0, {core})
        with open(tmp_path / f"{name}.log", "wb") as out:
            processes.append(subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, preexec_fn=pin))
        return processes[-1]

    def logs() -> str:
        return "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-1500:]}" for p in tmp_path.glob("*.log"))

    names = {
        "alerting": f"{topics['group']}.alerting",
        "detections": topics["detections"],
        "alerts": f"{topics['group']}.alerts",
        "gallery": f"{topics['group']}.gallery",
    }
    try:
        replicas = [
            started(
                detector_command(
                    detector_config(
                        topics,
                        http_port=port,
                        stop_after_idle_s=None,
                        ort_threads=1,
                        decode_threads=1,
                        session_timeout_s=6.0,
                        batch=8,
                        provider="cpu",  # asked for: no fallback to page about
                    )
                ),
                f"detector-{i}",
                cores[i % len(cores)],
            )
            for i, port in enumerate(ports["detectors"])
        ]
        worker_log = tmp_path / "alerting.log"
        processes.append(alerting(names, worker_log, http_port=ports["alerting"], rules="crowd"))
        jobs = {
            "facestream-producer": [ports["producer"]],
            "facestream-detector": ports["detectors"],
            "facestream-alerting": [ports["alerting"]],
        }
        with prometheus(tmp_path / "prometheus", jobs) as seen:
            until("the services up", lambda: len(seen.query('up{job=~"facestream-.*"} == 1')) == 3, 120, logs)

            def value(expr: str) -> float:
                found = seen.query(expr)
                return float(found[0]["value"][1]) if found else float("nan")

            started(
                producer_command(
                    cameras("burst"),
                    ProducerConfig(
                        fps=0.0,
                        loop=True,
                        max_frames=BURST // PARTITIONS,
                        frames_topic=topics["frames"],
                        placement=placement,
                    ),
                ),
                "burst",
            )
            pair_fps = answering_rate(ports["detectors"], logs)
            for series in (
                'facestream_consumer_lag{job="facestream-detector"}',
                "facestream_alerting_detection_events_total",
                'facestream_consumer_lag{job="facestream-alerting"}',
            ):
                until(f"{series} in Prometheus", lambda s=series: bool(seen.query(s)), 60, logs)
            camera = ProducerConfig(
                fps=LOAD * pair_fps / PARTITIONS, loop=True, frames_topic=topics["frames"], placement=placement
            )
            started(producer_command(cameras("cam"), camera, http_port=ports["producer"]), "producer")
            until(
                "the camera's frames answered in time",
                lambda: value("facestream:capture_to_event_seconds:p99_5m") < 1.0,
                120,
                logs,
            )
            until("the camera's series", lambda: bool(seen.query("facestream_producer_frames_sent_total")), 60, logs)
            for port in (ports["producer"], ports["alerting"], *ports["detectors"]):
                check_metrics(scrape(port))
            steady_until = time.monotonic() + STEADY_S
            while time.monotonic() < steady_until:  # the pair keeps up: nothing pages
                assert not seen.firing(), (seen.firing(), seen.query("facestream:consumer_lag:sum"))
                time.sleep(1)
            lag_before = seen.query('facestream:consumer_lag:sum{job="facestream-detector"}')
            replicas[1].send_signal(signal.SIGKILL)  # a crash: no goodbye to the group
            down_s = until("FacestreamReplicaDown", lambda: "FacestreamReplicaDown" in seen.firing(), 60, logs)
            behind_s = until(
                "FacestreamDetectorLagGrowing",
                lambda: "FacestreamDetectorLagGrowing" in seen.firing(),
                120,
                lambda: f"{seen.query('facestream:consumer_lag:sum')}\n{logs()}",
            )
            lag_after = seen.query('facestream:consumer_lag:sum{job="facestream-detector"}')
        (tmp_path / "report.json").write_text(
            json.dumps(
                {
                    "pair_fps": pair_fps,
                    "cameras_fps": camera.fps * PARTITIONS,
                    "down_s": down_s,
                    "behind_s": behind_s,
                    "lag_before": lag_before,
                    "lag_after": lag_after,
                }
            )
        )
        print(f"replica down paged {down_s:.1f} s after the kill, the lag {down_s + behind_s:.1f} s after;"
              f" lag before {lag_before}, after {lag_after}")  # fmt: skip
    finally:
        for process in processes:
            if process.poll() is None:
                process.terminate()
        for process in processes:
            try:
                process.wait(60)
            except subprocess.TimeoutExpired:
                process.kill()
