"""End to end: N simulated cameras -> Kafka -> detector replicas -> events, with capture-to-event latency.

The run starts the detector replicas once (the real ``python -m detector_service``, one consumer
group) and waits until they have warmed up and joined. For each camera count it then runs the real
producer (one process per ``cameras_per_producer`` cameras) with N cameras at the given frame rate
for a fixed time while one reader takes the events as a downstream service would. Capture-to-event
latency is the reader's clock at arrival minus the frame's ``capture_ts_ns`` (same machine, same
clock). Counts go up until p99 passes the latency limit.

Producers, broker, detectors and reader share one machine here, unlike a deployment's edge cameras:
``producer_cpus`` pins the producers to cores of their own (everything else gets the others), and each
step records the cores every part kept busy. Each replica serves /metrics, scraped every second, so a
step also records its stage busy times (decoding, inference, events) and a per-second timeline of its
first seconds; ``profile_s`` samples every replica with py-spy for that long mid-step.
"""

import os
import re
import shutil
import subprocess
import sys
import threading
import time
import urllib.request
import uuid
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from bench import RESULTS, free_port, save, settings_of
from bench.machine import cpu_seconds, describe
from bench.settings import E2EConfig
from facestream import kafka_clients, kafka_reading, kafka_topics, paths, samples
from facestream.broker.local import LocalBroker
from facestream.config import command_line
from facestream.detector_service import models
from facestream.detector_service.config import DetectorConfig, detector_command
from facestream.detector_service.stats import STAGES
from facestream.histograms import interpolated_quantile
from facestream.producers.config import ProducerConfig, producer_command
from facestream.producers.placement import Placement, by_key
from facestream.schemas import unpack_detection


def run(cfg: E2EConfig, command: str) -> dict:
    bootstrap = kafka_clients.bootstrap_servers()
    kafka_clients.check_reachable(bootstrap)
    samples.fetch()
    tag = uuid.uuid4().hex[:8]
    frames, events, dlq = f"e2e-{tag}.frames", f"e2e-{tag}.detections", f"e2e-{tag}.dlq"
    # Enough partitions for every group member, and for the batches of one member to fill from several.
    members = cfg.replicas * cfg.fronts
    partitions = cfg.partitions or max(8, members * 4)
    kafka_topics.ensure_topics({frames: partitions, events: partitions, dlq: 1}, bootstrap)
    logs = paths.home() / "bench" / f"e2e-{tag}"
    logs.mkdir(parents=True, exist_ok=True)
    log_files = [logs / f"detector-{i}.log" for i in range(cfg.replicas)]
    broker_pid = LocalBroker().status().pid
    cpus = _Cpus(cfg.producer_cpus)
    cpus.pin_rest(os.getpid(), broker_pid)  # the reader, the broker and (inherited) the detectors
    _build_torch_engine(cfg)
    ports = [free_port() for _ in log_files]
    front_ports = [port + front for port in ports for front in range(cfg.fronts)]  # a replica's fronts: port + i
    # The replicas start once and serve every camera count, as long-running services do: a count's
    # cameras carry its own key prefix, and a count starts only after the last one's events are all in.
    detectors = [
        _start_detector(cfg, frames, events, dlq, f"e2e-{tag}", log, port, index)
        for index, (log, port) in enumerate(zip(log_files, ports))
    ]
    rows, reader, warm_up = [], None, None
    try:
        _wait_until_settled(detectors, log_files, f"e2e-{tag}", partitions, members, bootstrap)
        reader = _Reader(bootstrap, events)
        meter = _CpuMeter([proc.pid for proc in detectors], broker_pid)
        if cfg.warm_up_s:  # the first count for a while, unmeasured: a broker that has just started runs cold
            warm_up = _one(cfg, frames, reader, cfg.cameras[0], logs, cpus, "warm", cfg.warm_up_s)
            print(f"warm-up: {cfg.cameras[0]} cameras for {cfg.warm_up_s:g} s, p99 {warm_up['latency_ms_p99']} ms")
        for step, count in enumerate(cfg.cameras):
            meter.start()
            with _Stages(front_ports) as stages, _Profiles(cfg, detectors, logs, step):
                row = _one(cfg, frames, reader, count, logs, cpus, f"s{step}", cfg.duration_s)
            row["cores_busy"] = meter.stop()
            row["cameras_per_replica"] = _cameras_per_replica(
                bootstrap, f"e2e-{tag}", detectors, _camera_ids(f"s{step}", count), partitions, cfg.placement
            )
            row["stages"] = stages.summary()
            row["histogram_latency_ms_p99"] = stages.histogram_p99_ms()
            row["detector_stats"] = [_last_stats_line(log) for log in log_files]
            if cfg.profile_s:
                row["profile"] = {
                    f"detector-{i}": _profile_summary(logs / f"pyspy-{step}-{i}.txt") for i in range(cfg.replicas)
                }
            rows.append(row)
            print(
                f"{count:>4} cameras x {cfg.fps:g} fps, {cfg.replicas} replica(s): {row['events_per_s']:.0f} events/s, "
                f"latency p50 {row['latency_ms_p50']} ms p99 {row['latency_ms_p99']} ms, "
                f"lag at end {row['lag_at_end']}, not delivered {row['not_delivered_10s_after_end']}",
                flush=True,
            )
            if not cfg.every_count and (
                row["latency_ms_p99"] > cfg.latency_limit_ms or row["not_delivered_10s_after_end"]
            ):
                break
    finally:
        if reader is not None:
            reader.close()
        for proc in detectors:
            proc.terminate()
        for proc in detectors:
            proc.wait(timeout=60)
    kafka_clients.admin(bootstrap).delete_topics([frames, events, dlq])
    within = [r for r in rows if r["latency_ms_p99"] <= cfg.latency_limit_ms and not r["not_delivered_10s_after_end"]]
    model_name = models.read_metadata(models.resolve(cfg.model)).get(models.META_MODEL, cfg.model)
    fronts = f"-f{cfg.fronts}" if cfg.fronts > 1 else ""
    gpus = f"-g{cfg.gpus}" if cfg.gpus > 1 else ""
    provider = cfg.provider.split(",")[0]  # the first of a chain: torch,cuda -> torch
    out = cfg.out or RESULTS / f"e2e-{model_name}-{provider}-r{cfg.replicas}{fronts}{gpus}.json"
    result: dict[str, Any] = {
        "benchmark": "e2e",
        "command": command,
        "machine": describe(),
        "model_name": model_name,
        "settings": settings_of(cfg),
        "cpus": cpus.describe(),
        "warm_up": warm_up,
        "logs": str(logs),
        "rows": rows,
        "max_cameras_within_limit": max((r["cameras"] for r in within), default=0),
    }
    save(result, out)
    print(
        f"most cameras with p99 <= {cfg.latency_limit_ms:.0f} ms and nothing dropped: "
        f"{result['max_cameras_within_limit']} -> {out}"
    )
    return result


def _one(
    cfg: E2EConfig,
    frames: str,
    reader: "_Reader",
    count: int,
    logs: Path,
    cpus: "_Cpus",
    prefix: str,
    duration_s: float,
) -> dict:
    """Stream ``count`` cameras (ids ``PREFIX-cam-N``) for ``duration_s``; what the reader saw of them."""
    per_camera = int(cfg.fps * duration_s)
    folders = [samples.portraits_dir(), samples.annotated_dir()]
    stills = [str(photo) for folder in folders for photo in sorted(folder.iterdir())]
    sources = [cfg.source] if cfg.source else stills if cfg.footage == "stills" else [str(f) for f in folders]
    ids = _camera_ids(prefix, count)
    cameras = [(camera, sources[cam % len(sources)]) for cam, camera in enumerate(ids)]
    placed = None
    if cfg.placement == "list":
        placed = logs / f"placement-{prefix}.txt"
        Placement.of(ids).write(placed)
    producers = []
    for first in range(0, count, cfg.cameras_per_producer):
        size = {"max_width": 640} if cfg.frame_size is None else {"frame_size": cfg.frame_size}
        config = ProducerConfig(
            fps=cfg.fps,
            loop=True,
            max_frames=per_camera,
            frames_topic=frames,
            stats_interval_s=60.0,
            placement=placed,
            **size,
        )
        cmd = [*producer_command(cameras[first : first + cfg.cameras_per_producer], config), *cfg.extra_produce_args]
        with open(logs / f"producer-{prefix}-{first}.log", "wb") as log:  # the child keeps its own handle
            producers.append(
                subprocess.Popen(
                    cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, preexec_fn=cpus.pin_producer
                )
            )
    for proc in producers:
        if proc.wait(timeout=duration_s * 3 + 60):
            raise RuntimeError(f"a producer exited with {proc.returncode}; logs in {logs}")
    texts = [log.read_text() for log in logs.glob(f"producer-{prefix}-*.log")]
    # What the producers' final lines say they sent (a motion gate holds frames back), and the frames
    # they sent later than their schedule (they could not keep pace: a load generator short of CPU).
    produced = sum(int(n) for text in texts for n in re.findall(r"done: sent (\d+) frames", text))
    late = sum(int(n) for text in texts for n in re.findall(r"\((\d+) late", text))
    lag = produced - reader.count(prefix)
    reader.wait_for(prefix, produced, timeout_s=10.0)
    latencies, arrivals = reader.taken(prefix)
    span = float(arrivals.max() - arrivals.min()) / 1e9 if len(arrivals) > 1 else 0.0
    return {
        "cameras": count,
        "producer_processes": len(producers),
        "frames_captured": per_camera * count,
        "frames_produced": produced,
        "events": len(latencies),
        "not_delivered_10s_after_end": produced - len(latencies),
        "lag_at_end": lag,
        "producer_late_frames": late,  # frames produced but not yet turned into events when the producers finished
        "events_per_s": round(len(latencies) / span, 1) if span else 0.0,
        "latency_ms_p50": round(float(np.percentile(latencies, 50)), 1) if len(latencies) else None,
        "latency_ms_p99": round(float(np.percentile(latencies, 99)), 1) if len(latencies) else float("inf"),
        "latency_ms_max": round(float(latencies.max()), 1) if len(latencies) else None,
        "latency_ms_p99_per_5s": _p99_by_window(latencies, arrivals, 5.0),
        "latency_ms_p99_per_1s_first_10s": _p99_by_window(latencies, arrivals, 1.0)[:10],
    }


def _camera_ids(prefix: str, count: int) -> list[str]:
    """A step's camera ids, in the order of its placement list."""
    return [f"{prefix}-cam-{cam:03d}" for cam in range(count)]


def _cameras_per_replica(
    bootstrap: str, group: str, detectors: list[subprocess.Popen], cameras: list[str], partitions: int, placement: str
) -> list[int]:
    """How many of a step's cameras each replica held: its members' partitions (the group's description,
    each member named by its process in its client id) and the cameras on each partition: the
    placement list's ``place mod partitions``, or the key's murmur2 hash (``placement.by_key``)."""
    admin = kafka_clients.admin(bootstrap)  # held while its future resolves: a client freed first never answers
    members = admin.describe_consumer_groups([group], request_timeout=30)[group].result().members
    families = [set(_tree(proc.pid)) for proc in detectors]
    on_partition = Counter(
        place % partitions if placement == "list" else by_key(camera, partitions)
        for place, camera in enumerate(cameras)
    )
    held = [0] * len(detectors)
    for member in members:
        pid = int(member.client_id.rsplit("-", 1)[1])
        replica = next(i for i, family in enumerate(families) if pid in family)
        held[replica] += sum(on_partition[tp.partition] for tp in member.assignment.topic_partitions)
    return held


def _p99_by_window(latencies: np.ndarray, arrivals_ns: np.ndarray, window_s: float) -> list[float]:
    """p99 latency of the frames captured in each ``window_s`` of the run: a start-up spike and a
    sustained backlog look the same in one p99, and not at all the same here."""
    if not len(latencies):
        return []
    captured_s = (arrivals_ns - latencies * 1e6) / 1e9
    window = ((captured_s - captured_s.min()) // window_s).astype(int)
    return [round(float(np.percentile(latencies[window == w], 99)), 1) for w in np.unique(window)]


def _build_torch_engine(cfg: E2EConfig) -> None:
    """With ``--provider torch,...``, build MogFace's PyTorch engine first (minutes; `build-engine` says
    "built already" when it is), so that no replica falls back to ONNX Runtime for want of it."""
    if not cfg.provider.startswith("torch"):
        return
    config = DetectorConfig(
        model=cfg.model, batch=cfg.batch, provider=cfg.provider, allow_random_weights=cfg.allow_random_weights
    )
    seed = ["--random-seed", str(cfg.torch_seed)] if cfg.allow_random_weights else []
    command = [sys.executable, "-m", "facestream", "models", "build-engine", *command_line(config), *seed]
    print(f"building the torch engine: {' '.join(command[2:])}", flush=True)
    subprocess.run(command, check=True)


def _start_detector(
    cfg: E2EConfig, frames: str, events: str, dlq: str, group: str, log: Path, http_port: int, index: int
) -> subprocess.Popen:
    config = DetectorConfig(
        http_port=http_port,
        device=index % cfg.gpus if cfg.gpus > 1 else None,
        fronts=cfg.fronts,
        model=cfg.model,
        group=group,
        batch=cfg.batch,
        max_wait_ms=cfg.max_wait_ms,
        provider=cfg.provider,
        frames_topic=frames,
        detections_topic=events,
        dead_letter_topic=dlq,
    )
    cmd = [*detector_command(config), *cfg.detect_args]
    with open(log, "wb") as out:  # the child keeps its own handle
        return subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)


def _last_stats_line(log: Path) -> str | None:
    """A replica's latest stats line (counts and ms per frame per stage since it started), without the
    logger's prefix: with cores busy, it tells whether decoding, inference or the host work ran out."""
    lines = [line for line in log.read_text(errors="replace").splitlines() if "ms/frame " in line]
    return lines[-1][lines[-1].find("frames ") :] if lines else None


def _wait_until_settled(
    procs: list[subprocess.Popen],
    logs: list[Path],
    group: str,
    partitions: int,
    members: int,
    bootstrap: str,
    timeout_s: float = 300.0,
) -> None:
    """Warm-up (a TensorRT build, cuDNN search) and the group join happen before any frame is sent.

    Each replica logging its first assignment is not enough: a cooperative rebalance hands partitions
    over in rounds (seen taking 9 s with 2 replicas), and frames sent meanwhile wait. So the wait ends
    when the group is stable, every replica holds partitions and all of them are held, twice in a row.
    """
    from confluent_kafka import ConsumerGroupState, KafkaException

    admin = kafka_clients.admin(bootstrap)
    deadline, settled = time.monotonic() + timeout_s, 0
    while time.monotonic() < deadline:
        for proc, log in zip(procs, logs):
            if proc.poll() is not None:
                raise RuntimeError(f"a detector exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            group_state = admin.describe_consumer_groups([group])[group].result()
        except KafkaException:  # e.g. NOT_COORDINATOR while a fresh broker loads its group coordinator
            group_state = None
        held = [len(m.assignment.topic_partitions) for m in group_state.members] if group_state else []
        ready = (
            group_state is not None
            and group_state.state == ConsumerGroupState.STABLE
            and len(held) == members
            and all(held)
            and sum(held) == partitions
        )
        settled = settled + 1 if ready else 0
        if settled == 2:
            return
        time.sleep(1.0)
    raise RuntimeError(f"detector group {group} not settled within {timeout_s:.0f} s; logs in {logs[0].parent}")


class _Cpus:
    """Producers on cores of their own and everything else (reader, broker, detectors) on the others, so
    the load generator cannot take the detectors' cores; with no producer cores given, nothing is pinned."""

    def __init__(self, producer_cpus: tuple[int, ...]) -> None:
        allowed = os.sched_getaffinity(0)
        self.producers = set(producer_cpus)
        if self.producers - allowed:
            raise ValueError(f"producer cores {sorted(self.producers - allowed)} are not among this machine's")
        self.rest = allowed - self.producers
        if not self.rest:
            raise ValueError("the producer cores leave none for the broker and the detectors")

    def pin_rest(self, *pids: int | None) -> None:
        """Every thread of each process onto the other cores (threads and children made later inherit it)."""
        if not self.producers:
            return
        for pid in filter(None, pids):
            for tid in os.listdir(f"/proc/{pid}/task"):
                os.sched_setaffinity(int(tid), self.rest)

    def pin_producer(self) -> None:
        """In a producer child before it runs (``preexec_fn``)."""
        if self.producers:
            os.sched_setaffinity(0, self.producers)

    def describe(self) -> dict:
        if not self.producers:
            return {"pinned": False, "cores": len(self.rest)}
        return {"pinned": True, "producers": sorted(self.producers), "rest": sorted(self.rest)}


class _Stages:
    """Each replica's /metrics scraped every second during a step: its stage busy times over the step
    (seconds of decoding, inference, ... per second of wall time) and a timeline of its first seconds."""

    FIRST_S = 15

    def __init__(self, ports: list[int]) -> None:
        self._ports = ports
        self._samples: list[tuple[float, list[dict[str, float]]]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> "_Stages":
        self._thread.start()
        return self

    def __exit__(self, *_exc) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _loop(self) -> None:
        while True:
            self._samples.append((time.monotonic(), [_scrape(port) for port in self._ports]))
            if self._stop.wait(1.0):
                self._samples.append((time.monotonic(), [_scrape(port) for port in self._ports]))
                return

    def summary(self) -> list[dict]:
        if len(self._samples) < 2:
            return []
        (t0, first), (t1, last) = self._samples[0], self._samples[-1]
        out = []
        for i, (a, b) in enumerate(zip(first, last)):
            frames, batches = b["frames"] - a["frames"], b["batches"] - a["batches"]
            timeline = [(t, s[i]) for t, s in self._samples[: self.FIRST_S + 1]]
            steps = list(zip(timeline, timeline[1:]))
            out.append(
                {
                    "frames_per_s": round(frames / (t1 - t0), 1),
                    "batch_avg": round(frames / batches, 1) if batches else None,
                    "busy": {k: round((b[k] - a[k]) / (t1 - t0), 3) for k in STAGES},
                    # with an embedder: the share of faces embedded (the others carried by their track)
                    "faces_embedded_share": _share(
                        b["faces_embedded"] - a["faces_embedded"], b["faces_carried"] - a["faces_carried"]
                    ),
                    "first_s_frames": [round(y["frames"] - x["frames"]) for (_, x), (_, y) in steps],
                    "first_s_decode_busy": [
                        round((y["decode"] - x["decode"]) / (u - t), 2) for (t, x), (u, y) in steps
                    ],
                }
            )
        return out

    def histogram_p99_ms(self) -> float | None:
        """p99 capture -> event over the step as the replicas' own histograms give it (all replicas'
        bucket counts added, then read as Prometheus's histogram_quantile does): the figure the
        FacestreamEventsLate alert watches, beside the reader's per-event one."""
        if len(self._samples) < 2:
            return None
        (_, first), (_, last) = self._samples[0], self._samples[-1]
        bounds = sorted({float(k[3:]) for sample in last for k in sample if k.startswith("le:")})
        cumulative = np.array(
            [sum(b.get(f"le:{x:g}", 0.0) - a.get(f"le:{x:g}", 0.0) for a, b in zip(first, last)) for x in bounds]
        )
        total = sum(b.get("le:inf", 0.0) - a.get("le:inf", 0.0) for a, b in zip(first, last))
        counts = np.diff(np.concatenate([[0.0], cumulative, [total]]))
        p99 = interpolated_quantile(np.array(bounds), counts, 0.99)
        return None if np.isnan(p99) else round(p99 * 1000, 1)


def _share(embedded: float, carried: float) -> float | None:
    return round(embedded / (embedded + carried), 4) if embedded + carried else None


def _scrape(port: int) -> dict[str, float]:
    """Frames, batches and stage seconds from one replica's /metrics."""
    found = dict.fromkeys(("frames", "batches", "faces_embedded", "faces_carried", *STAGES), 0.0)
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as response:
        for line in response.read().decode().splitlines():
            name, _, value = line.rpartition(" ")
            if name == "facestream_frames_total":
                found["frames"] = float(value)
            elif name == "facestream_batches_total":
                found["batches"] = float(value)
            elif name in ("facestream_faces_embedded_total", "facestream_faces_carried_total"):
                found[name[len("facestream_") : -len("_total")]] = float(value)
            elif name.startswith('facestream_stage_seconds_total{stage="'):
                found[name.split('"')[1]] = float(value)
            elif name.startswith('facestream_capture_to_event_seconds_bucket{le="'):
                bound = float(name.split('"')[1])
                found[f"le:{bound:g}"] = float(value)
    return found


class _Profiles:
    """py-spy on every replica for ``profile_s`` seconds, from a third into the step (native frames,
    idle threads too, so waits show as well as work); raw stacks in the logs folder."""

    def __init__(self, cfg: E2EConfig, detectors: list[subprocess.Popen], logs: Path, step: int) -> None:
        self._cfg, self._detectors, self._logs, self._step = cfg, detectors, logs, step
        self._timer: threading.Timer | None = None
        self._procs: list[subprocess.Popen] = []

    def __enter__(self) -> None:
        if self._cfg.profile_s:
            self._timer = threading.Timer(self._cfg.duration_s / 3, self._start)
            self._timer.start()

    def _start(self) -> None:
        for i, proc in enumerate(self._detectors):
            out = self._logs / f"pyspy-{self._step}-{i}.txt"
            cmd = [
                py_spy(),
                "record",
                "--pid",
                str(proc.pid),
                "--duration",
                f"{self._cfg.profile_s:g}",
                "--rate",
                "100",
            ]
            cmd += ["--format", "raw", "--threads", "--idle", "--native", "--output", str(out)]
            self._procs.append(subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))

    def __exit__(self, *_exc) -> None:
        if self._timer is not None:
            self._timer.join()
        for proc in self._procs:
            proc.wait(timeout=self._cfg.profile_s + 60)


def py_spy() -> str:
    """py-spy's program: on the PATH, or beside a package folder it was installed into (--target)."""
    found = shutil.which("py-spy") or next(
        (str(Path(entry) / "bin" / "py-spy") for entry in sys.path if (Path(entry) / "bin" / "py-spy").is_file()), None
    )
    if found is None:
        raise RuntimeError("--profile-s needs py-spy (pip install py-spy)")
    return found


def _profile_summary(path: Path, top: int = 6) -> dict:
    """Per thread: its samples, and the Python functions and the innermost (often native) frames it was
    in most, as shares of its samples. py-spy's raw lines: ``thread (TID): NAME;outer;...;inner COUNT``."""
    if not path.exists():
        return {"error": "py-spy wrote nothing"}
    threads: dict[str, tuple[Counter, Counter]] = defaultdict(lambda: (Counter(), Counter()))
    for line in path.read_text(errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        frames = stack.split(";")
        if not count.isdigit() or len(frames) < 2:
            continue
        name = frames[0].split(": ", 1)[-1]
        python = [f for f in frames[1:] if ".py:" in f]
        where, leaf = threads[name]
        where[_without_line(python[-1]) if python else "(no Python frame)"] += int(count)
        leaf[_without_line(frames[-1])] += int(count)
    summary = {}
    for name, (where, leaf) in sorted(threads.items(), key=lambda item: -sum(item[1][0].values())):
        total = sum(where.values())
        summary[name] = {
            "samples": total,
            "python": [[f, round(n / total, 3)] for f, n in where.most_common(top)],
            "innermost": [[f, round(n / total, 3)] for f, n in leaf.most_common(top)],
        }
    return summary


def _without_line(frame: str) -> str:
    """``func (file.py:12)`` -> ``func (file.py)``; a native ``0x7f.. (libc.so.6)`` -> ``(libc.so.6)``."""
    name, _, where = frame.partition(" (")
    where = where.rstrip(")").rsplit(":", 1)[0]
    return f"({where})" if name.startswith("0x") else f"{name} ({where})"


class _CpuMeter:
    """Cores each part kept busy during a step (CPU seconds / wall seconds, from /proc): producers,
    broker, detectors and reader share the machine here, unlike a deployment's edge producers."""

    def __init__(self, detector_pids: list[int], broker_pid: int | None) -> None:
        self._pids = {f"detector-{i}": pid for i, pid in enumerate(detector_pids)}
        if broker_pid is not None:  # None: a broker not started by `facestream kafka start`
            self._pids["broker"] = broker_pid
        self._before: dict[str, float] = {}
        self._started = 0.0

    def start(self) -> None:
        self._before, self._started = self._read(), time.monotonic()

    def stop(self) -> dict[str, float]:
        now, elapsed = self._read(), time.monotonic() - self._started
        return {name: round((now[name] - self._before[name]) / elapsed, 2) for name in now}

    def _read(self) -> dict[str, float]:
        seconds = {name: sum(sum(cpu_seconds(p)[:2]) for p in _tree(pid)) for name, pid in self._pids.items()}
        # This process: the reader thread in its own time, the producers (waited for) in its children's.
        own_user, own_system, children_user, children_system = cpu_seconds(os.getpid())
        return {**seconds, "reader": own_user + own_system, "producers": children_user + children_system}


def _tree(pid: int) -> list[int]:
    """A process and every live descendant (a detector with fronts is a family: its GPU owner and fronts)."""
    found, index = [pid], 0
    while index < len(found):
        for task in Path(f"/proc/{found[index]}/task").glob("*/children"):
            try:
                found += [int(child) for child in task.read_text().split()]
            except OSError:  # gone meanwhile
                pass
        index += 1
    return found


class _Reader:
    """A downstream consumer in a thread: arrival time minus capture time, per event, by camera-id prefix."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self._seen: dict[bytes, tuple[list[float], list[int]]] = defaultdict(lambda: ([], []))
        self._stop = threading.Event()
        self._assigned = threading.Event()
        self._topic, self._bootstrap = topic, bootstrap
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()
        # A reader still joining its group would see early events late, and count that as latency.
        if not self._assigned.wait(timeout=60):
            raise RuntimeError(f"the event reader was not assigned {topic} within 60 s")

    def _loop(self) -> None:
        for msg in kafka_reading.records(
            self._topic,
            self._stop.is_set,
            True,
            self._bootstrap,
            0.05,
            lambda _c, _p: self._assigned.set(),
            **{"fetch.wait.max.ms": 10},
        ):
            now = time.time_ns()
            latencies, arrivals = self._seen[msg.key().split(b"-", 1)[0]]
            latencies.append((now - unpack_detection(msg.value()).capture_ts_ns) / 1e6)
            arrivals.append(now)

    def count(self, prefix: str) -> int:
        return len(self._seen[prefix.encode()][0])

    def taken(self, prefix: str) -> tuple[np.ndarray, np.ndarray]:
        """(latencies in ms, arrival times in ns) of the events of cameras named ``prefix-...``."""
        latencies, arrivals = self._seen[prefix.encode()]
        return np.array(latencies), np.array(arrivals)

    def wait_for(self, prefix: str, expected: int, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while self.count(prefix) < expected and time.monotonic() < deadline:
            time.sleep(0.1)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
