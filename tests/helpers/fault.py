"""Fault tests' tools (see ``pythonpath`` in pyproject): detector replicas as separate processes, a live
producer, a reader that notes when each event arrived, and the report every fault test gives:
frames produced, answered (an event or a dead letter), lost, duplicated, and the longest time a
camera went without events."""

import json
import os
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from facestream import kafka_reading, kafka_settings, kafka_topics
from facestream.alerting.config import AlertingConfig, alerting_command
from facestream.dashboard.config import DashboardConfig, dashboard_command
from facestream.detector_service.config import detector_command
from facestream.producers.config import ProducerConfig, producer_command
from facestream.schemas import unpack_alert, unpack_detection
from helpers.http import free_port, get
from helpers.kafka import detector_config
from helpers.worker import alert_record

# Each report is a JSON line in this file, which conftest's pytest_terminal_summary prints as a table at
# the end of the session: a file, so that reports from pytest-xdist's worker processes reach it too.
REPORTS_ENV = "FACESTREAM_FAULT_REPORTS"


def replica(topics: dict, log: Path, kafka: dict | None = None, **changes) -> subprocess.Popen:
    """A detector process of the test's group, its output in ``log``, with ``kafka`` over its Kafka
    client settings; it stops 8 s after its last frame unless ``changes`` say otherwise."""
    config = detector_config(topics, **{"stop_after_idle_s": 8.0, **changes})
    env = {**os.environ, kafka_settings.ENV_MERGED: json.dumps(kafka)} if kafka else None
    with open(log, "ab") as out:
        return subprocess.Popen(detector_command(config), stdout=out, stderr=subprocess.STDOUT, env=env)


def final_summary(log: Path) -> dict:
    """The counters a detector prints as its last JSON line when it stops."""
    return json.loads(next(line for line in reversed(log.read_text().splitlines()) if line.startswith("{")))


def wait_for_line(log: Path, text: str, timeout_s: float = 60.0, count: int = 1) -> None:
    deadline = time.monotonic() + timeout_s
    while log.read_text(errors="replace").count(text) < count:
        assert time.monotonic() < deadline, (
            f"{text!r} not in {log.name} after {timeout_s:.0f} s:\n{log.read_text()[-3000:]}"
        )
        time.sleep(0.2)


def live_cameras(topics: dict, photo: Path, cameras: int, fps: float, seconds: float) -> subprocess.Popen:
    """``cameras`` cameras streaming ``photo`` at ``fps`` for ``seconds``, numbered from 0, 320x240."""
    config = ProducerConfig(
        fps=fps,
        loop=True,
        max_frames=int(fps * seconds),
        start_seq=0,
        frames_topic=topics["frames"],
        frame_size=(320, 240),
    )
    pairs = [(f"cam-{i}", str(photo)) for i in range(cameras)]
    return subprocess.Popen(producer_command(pairs, config), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def streaming_to_one_replica(topics: dict, log: Path, photo: Path, cameras: int, seconds: float):
    """(replica, reader, producer): one replica holding the group, a reader, cameras at 5 fps. The
    cameras start with the replica, not once it holds the group: its idle limit counts from its
    assignment, and a producer slow to start on a loaded machine could outlast it (the replica reads
    from the earliest frame, so none is missed)."""
    first = replica(topics, log)
    reader = EventReader(topics["detections"])
    producer = live_cameras(topics, photo, cameras=cameras, fps=5.0, seconds=seconds)
    wait_for_line(log, "assigned t-")
    return first, reader, producer


class PeakMemory:
    """A process's resident memory, sampled on a thread of its own until the process ends (Linux's
    /proc): its size when watching began, and the largest seen."""

    def __init__(self, pid: int, every_s: float = 0.2) -> None:
        self._path = Path(f"/proc/{pid}/status")
        self.start_mb = self.peak_mb = self._rss_mb() or 0.0
        self._every_s = every_s
        threading.Thread(target=self._watch, daemon=True).start()

    def _rss_mb(self) -> float | None:
        try:
            line = next(line for line in self._path.read_text().splitlines() if line.startswith("VmRSS:"))
        except (OSError, StopIteration):  # the process has ended
            return None
        return int(line.split()[1]) / 1024

    def _watch(self) -> None:
        while (rss := self._rss_mb()) is not None:
            self.peak_mb = max(self.peak_mb, rss)
            time.sleep(self._every_s)


@dataclass
class EventReader:
    """Reads the detections topic from the start on a thread of its own; notes each event's arrival."""

    topic: str
    settings: dict = field(default_factory=dict)  # librdkafka settings, e.g. isolation.level
    arrivals: list[tuple[str, int, float]] = field(default_factory=list)  # camera, frame_seq, monotonic s
    events: list = field(default_factory=list)  # the DetectionEvents, in arrival order
    _stop: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        for msg in kafka_reading.records(self.topic, self._stop.is_set, poll_s=0.2, **self.settings):
            event = unpack_detection(msg.value())
            self.events.append(event)
            self.arrivals.append((event.camera_id, event.frame_seq, time.monotonic()))

    def stop(self, after_s: float = 2.0) -> None:
        time.sleep(after_s)
        self._stop.set()
        self._thread.join(timeout=30)

    def longest_gap(self, since: float, until: float | None = None) -> float:
        """The longest a camera waited for its next event within [since, until] (arrival times)."""
        gaps = []
        for camera in {c for c, _, _ in self.arrivals}:
            times = sorted(t for c, _, t in self.arrivals if c == camera and t >= since)
            times = [since, *times] if until is None else [since, *[t for t in times if t <= until], until]
            gaps += [b - a for a, b in zip(times, times[1:])]
        return max(gaps, default=0.0)


def wait_out(producer: subprocess.Popen, replicas: dict[Path, subprocess.Popen], reader: EventReader) -> None:
    """Wait for the stream to end and the replicas (by log file) to stop on their own, then for the reader."""
    assert producer.wait(timeout=240) == 0
    for log, process in replicas.items():
        try:
            code = process.wait(timeout=300)
        except subprocess.TimeoutExpired:
            process.kill()
            code = None
        assert code == 0, f"exit {code}:\n" + log.read_text(errors="replace")[-6000:]
    reader.stop()


def report(fault: str, produced: int, reader: EventReader, skipped: int = 0, **measured) -> dict:
    """The fault test's figures, kept for the session summary and returned for its assertions; frames
    ``skipped`` on purpose (too old, counted by the detector) are not lost."""
    seen = [(c, s) for c, s, _ in reader.arrivals]
    answered = len(set(seen))
    result = {
        "fault": fault,
        "produced": produced,
        "answered": answered,
        **({"skipped": skipped} if skipped else {}),
        "lost": produced - answered - skipped,
        "duplicates": len(seen) - answered,
        **{k: round(v, 1) if isinstance(v, float) else v for k, v in measured.items()},
    }
    keep_report(result)
    print("fault report:", json.dumps(result))
    return result


def keep_report(result: dict) -> None:
    """Add ``result`` to the table printed at the end of the session."""
    if os.environ.get(REPORTS_ENV):
        with open(os.environ[REPORTS_ENV], "a") as out:
            out.write(json.dumps(result) + "\n")


def wait_ready(service: subprocess.Popen, port: int, log: Path, timeout_s: float = 90.0) -> None:
    """Until ``service`` answers ready on ``port``; fail with its log if it exits or takes too long."""
    deadline = time.monotonic() + timeout_s
    while get(port, "/readyz")[0] != 200:
        assert service.poll() is None and time.monotonic() < deadline, log.read_text(errors="replace")[-3000:]
        time.sleep(0.5)


class AlertsBeside:
    """An alerting worker and the dashboard beside the replicas while a fault happens. The worker runs
    the crowd rule with one face enough, so every camera keeps an alert open and updated (a record every
    2 s of capture time). ``settle`` then lets a fresh worker of another group make the alerts from the
    same events, undisturbed: every record it makes must be among those published during the fault
    (no alert state lost), and no other (repeats only of equal records)."""

    def __init__(self, topics: dict, folder: Path) -> None:
        self.topics, self.folder, self.port = topics, folder, free_port()
        live_port = free_port()
        self.live = self._worker("live", ready_port=live_port)
        page = DashboardConfig(
            http_port=self.port,
            database=f"sqlite:///{folder / 'alerts.db'}",
            frames_topic=topics["frames"],
            detections_topic=topics["detections"],
            poses_topic=self._name("poses"),
            alerts_topic=self._name("alerts-live"),
            status_topic=self._name("status"),
        )
        with open(folder / "dashboard.log", "wb") as out:
            self.page = subprocess.Popen(dashboard_command(page), stdout=out, stderr=subprocess.STDOUT)
        # Both ready before the fault (started together, each seconds of imports on two cores): a page
        # still starting when a node stops meets the fault at its start (e.g. its topics to create while
        # only two nodes are registered), not while it serves; the worker has its partitions.
        wait_ready(self.live, live_port, folder / "alerting-live.log")
        wait_ready(self.page, self.port, folder / "dashboard.log")

    def _name(self, part: str) -> str:
        return f"{self.topics['group']}.{part}"

    def _worker(self, run: str, ready_port: int = 0) -> subprocess.Popen:
        """An alerting worker, started; with ``ready_port`` it says there when it is ready (its
        partitions assigned)."""
        config = AlertingConfig(
            http_port=ready_port,
            group=self._name(f"alerting-{run}"),
            rules="crowd",
            crowd={"min_faces": 1},
            detections_topic=self.topics["detections"],
            poses_topic=self._name("poses"),
            status_topic=self._name("status"),
            alerts_topic=self._name(f"alerts-{run}"),
            gallery_topic=self._name("gallery"),
            stats_interval_s=5.0,
        )
        log = self.folder / f"alerting-{run}.log"
        with open(log, "wb") as out:
            return subprocess.Popen(alerting_command(config), stdout=out, stderr=subprocess.STDOUT)

    def _finish(self, worker: subprocess.Popen, run: str, timeout_s: float = 120.0) -> list:
        """Once ``worker`` has committed every event: stop it; its alert records."""
        deadline = time.monotonic() + timeout_s
        while kafka_topics.group_lag(self._name(f"alerting-{run}"), self.topics["detections"]):
            assert worker.poll() is None, (self.folder / f"alerting-{run}.log").read_text(errors="replace")[-3000:]
            assert time.monotonic() < deadline, f"the {run} alerting worker did not catch up"
            time.sleep(1.0)
        worker.terminate()
        assert worker.wait(timeout=60) in (0, -15)
        return [unpack_alert(r.value()) for r in kafka_reading.read_to_end(self._name(f"alerts-{run}"))]

    def settle(self) -> dict:
        """After the stream: the page still answers; the live worker's records against the reference's."""
        status, _ = get(self.port, "/readyz")
        self.page.terminate()
        self.page.wait(timeout=60)
        assert status == 200, (self.folder / "dashboard.log").read_text(errors="replace")[-3000:]
        live = {alert_record(a) for a in self._finish(self.live, "live")}
        reference = {alert_record(a) for a in self._finish(self._worker("reference"), "reference")}
        return {
            "alert_records": len(reference),
            "alert_states_lost": len(reference - live),
            "alert_records_unequal": len(live - reference),
        }
