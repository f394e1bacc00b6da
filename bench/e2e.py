"""End to end: N simulated cameras -> Kafka -> detector replicas -> events, with capture-to-event latency.

For each camera count the run starts the detector replicas (the real ``python -m detector_service``,
one consumer group), waits until they have warmed up and joined, then runs the real producer with N
cameras at the given frame rate for a fixed time while a reader takes the events as a downstream
service would. Capture-to-event latency is the reader's clock at arrival minus the frame's
``capture_ts_ns`` (same machine, same clock). Counts go up until p99 passes the latency limit.
"""

import json
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bench.machine import describe
from facestream import kafka_clients, paths, samples
from schemas import decode_detection


@dataclass(frozen=True)
class E2EConfig:
    model: str
    cameras: tuple[int, ...]
    fps: float
    duration_s: float
    replicas: int
    batch: int
    max_wait_ms: float
    provider: str
    latency_limit_ms: float
    out: Path
    extra_detect_args: tuple[str, ...] = ()


def run(cfg: E2EConfig, command: str) -> dict:
    bootstrap = kafka_clients.bootstrap_servers()
    kafka_clients.check_reachable(bootstrap)
    samples.fetch()
    rows = []
    for count in cfg.cameras:
        row = _one(cfg, bootstrap, count)
        rows.append(row)
        print(f"{count:>4} cameras x {cfg.fps:g} fps, {cfg.replicas} replica(s): {row['events_per_s']:.0f} events/s, "
              f"latency p50 {row['latency_ms_p50']:.0f} ms p99 {row['latency_ms_p99']:.0f} ms, "
              f"lag at end {row['lag_at_end']}, not delivered {row['not_delivered_10s_after_end']}", flush=True)  # fmt: skip
        if row["latency_ms_p99"] > cfg.latency_limit_ms or row["not_delivered_10s_after_end"]:
            break
    within = [r for r in rows if r["latency_ms_p99"] <= cfg.latency_limit_ms and not r["not_delivered_10s_after_end"]]
    result = {
        "benchmark": "e2e",
        "command": command,
        "machine": describe(),
        "settings": {k: (str(v) if isinstance(v, Path) else v) for k, v in cfg.__dict__.items()},
        "rows": rows,
        "max_cameras_within_limit": max((r["cameras"] for r in within), default=0),
    }
    cfg.out.parent.mkdir(parents=True, exist_ok=True)
    cfg.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"most cameras with p99 <= {cfg.latency_limit_ms:.0f} ms and nothing dropped: "
          f"{result['max_cameras_within_limit']} -> {cfg.out}")  # fmt: skip
    return result


def _one(cfg: E2EConfig, bootstrap: str, count: int) -> dict:
    tag = uuid.uuid4().hex[:8]
    frames, events, dlq = f"e2e-{tag}.frames", f"e2e-{tag}.detections", f"e2e-{tag}.dlq"
    partitions = max(4, cfg.replicas * 2)
    kafka_clients.ensure_topics({frames: partitions, events: partitions, dlq: 1}, bootstrap)
    logs = paths.home() / "bench" / f"e2e-{tag}"
    logs.mkdir(parents=True, exist_ok=True)
    detectors = [_start_detector(cfg, frames, events, dlq, f"e2e-{tag}", logs / f"detector-{i}.log")
                 for i in range(cfg.replicas)]  # fmt: skip
    try:
        _wait_until_assigned(detectors, [logs / f"detector-{i}.log" for i in range(cfg.replicas)])
        reader = _Reader(bootstrap, events)
        per_camera = int(cfg.fps * cfg.duration_s)
        sources = [str(samples.portraits_dir()), str(samples.annotated_dir())]
        producer_cmd = [sys.executable, "-m", "producers", "--fps", str(cfg.fps), "--loop", "--max-frames",
                        str(per_camera), "--max-width", "640", "--topic", frames, "--stats-interval", "60"]  # fmt: skip
        for cam in range(count):
            producer_cmd += ["--camera", f"cam-{cam:03d}", "--source", sources[cam % 2]]
        started = time.monotonic()
        subprocess.run(producer_cmd, check=True, capture_output=True, timeout=cfg.duration_s * 3 + 60)
        produced = per_camera * count
        lag = produced - reader.count()
        reader.wait_for(produced, timeout_s=10.0)
        elapsed = time.monotonic() - started
    finally:
        for proc in detectors:
            proc.terminate()
        for proc in detectors:
            proc.wait(timeout=60)
    latencies = np.array(reader.latencies_ms)
    reader.close()
    kafka_clients.admin(bootstrap).delete_topics([frames, events, dlq])
    return {
        "cameras": count,
        "frames_produced": produced,
        "events": len(latencies),
        "not_delivered_10s_after_end": produced - len(latencies),
        "lag_at_end": lag,  # frames produced but not yet turned into events when the producer finished
        "events_per_s": round(len(latencies) / elapsed, 1),
        "latency_ms_p50": round(float(np.percentile(latencies, 50)), 1) if len(latencies) else None,
        "latency_ms_p99": round(float(np.percentile(latencies, 99)), 1) if len(latencies) else float("inf"),
        "latency_ms_max": round(float(latencies.max()), 1) if len(latencies) else None,
        "logs": str(logs),
    }


def _start_detector(cfg: E2EConfig, frames: str, events: str, dlq: str, group: str, log: Path) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "detector_service", "--model", cfg.model, "--group", group, "--batch", str(cfg.batch),
           "--max-wait-ms", str(cfg.max_wait_ms), "--provider", cfg.provider, "--frames-topic", frames,
           "--detections-topic", events, "--dead-letter-topic", dlq, "--stats-interval", "5", *cfg.extra_detect_args]  # fmt: skip
    return subprocess.Popen(cmd, stdout=open(log, "wb"), stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)


def _wait_until_assigned(procs: list[subprocess.Popen], logs: list[Path], timeout_s: float = 300.0) -> None:
    """Warm-up (a TensorRT build, cuDNN search) and the group join happen before any frame is sent."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for proc, log in zip(procs, logs):
            if proc.poll() is not None:
                raise RuntimeError(f"a detector exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        if all("assigned" in log.read_text() for log in logs):
            time.sleep(1.0)  # let a multi-replica group settle its last rebalance
            return
        time.sleep(0.5)
    raise RuntimeError(f"detectors not assigned within {timeout_s:.0f} s; logs in {logs[0].parent}")


class _Reader:
    """A downstream consumer in a thread: arrival time minus capture time, per event."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.latencies_ms: list[float] = []
        self._stop = threading.Event()
        self._assigned = threading.Event()
        self._consumer = kafka_clients.viewer(topic, True, bootstrap, on_assign=lambda _c, _p: self._assigned.set(),
                                              **{"fetch.wait.max.ms": 10})  # fmt: skip
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()
        # A reader still joining its group would see early events late, and count that as latency.
        if not self._assigned.wait(timeout=60):
            raise RuntimeError(f"the event reader was not assigned {topic} within 60 s")

    def _loop(self) -> None:
        while not self._stop.is_set():
            # poll() returns at the first event; consume(n, timeout) would wait for n of them.
            first = self._consumer.poll(0.05)
            if first is None:
                continue
            for msg in [first, *self._consumer.consume(500, 0)]:
                if not msg.error():
                    now = time.time_ns()
                    self.latencies_ms.append((now - decode_detection(msg.value()).capture_ts_ns) / 1e6)

    def count(self) -> int:
        return len(self.latencies_ms)

    def wait_for(self, expected: int, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while self.count() < expected and time.monotonic() < deadline:
            time.sleep(0.1)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
        self._consumer.close()

