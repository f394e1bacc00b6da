"""Live cameras on this machine: what reading an RTSP stream costs a producer, by library and mode, and
how many cameras one core of a producer holds.

The cameras are GStreamer's RTSP server (``rtsp_camera.py``: vtest.avi as H.264 at 25 fps, a keyframe
a second, each frame stamped with when it was sent), one process, one encoder whatever the number of
clients, on cores other than the measured process's.

``decode``: one camera per frame size, 5 frames a second taken, each mode in a process of its own
(one after another, repeated; the median of the repeats): its CPU over the measured seconds (its own
clock, all threads), pictures decoded and frames taken per second, and how old each frame taken was
(its stamp). Modes:

- ``pyav-all``: facestream's ``LiveSource`` decoding every picture (``produce --live-decode all``),
  the newest converted to BGR when a frame is due;
- ``pyav-keyframes``: the same, decoding keyframes only (``--live-decode keyframes``: at most one
  frame per keyframe is taken);
- ``opencv-grab``: OpenCV's FFmpeg backend, every picture grabbed, the frame due retrieved (converted);
- ``opencv-read``: OpenCV, ``read()`` of every picture (decoded and converted).

``cameras``: the producer itself (``facestream produce``) pinned to one core, N cameras of the server
(each its own client) at 5 frames a second, N growing: per camera the pictures decoded and frames sent
per second (from its /metrics), the staleness of the frames sent (stamps read back from Kafka) and the
producer's CPU. N holds when every camera decodes at least 95% of the stream's pictures and sends at
least 95% of --fps, with staleness under 500 ms at p99, in every one of ``camera_repeats`` runs.
"""

import multiprocessing
import os
import resource
import signal
import subprocess
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from bench import free_port, save, settings_of
from bench.e2e import _Cpus
from bench.engine import _progress
from bench.figures import Target, runs_of, source
from bench.machine import cpu_seconds, describe
from bench.settings import LiveBenchConfig
from bench.stamp import read_stamp
from facestream import kafka_reading, kafka_topics, samples
from facestream.broker import LocalBroker
from facestream.config import show_size
from facestream.producers.config import ProducerConfig, producer_command
from facestream.producers.live import LiveSettings, LiveSource
from facestream.schemas import unpack_frame

SERVER = Path(__file__).resolve().parent / "rtsp_camera.py"
STREAM_FPS = 25
HOLDS_SHARE = 0.95
STALE_LIMIT_MS = 500.0


def run(cfg: LiveBenchConfig, command: str) -> dict:
    cpus = _Cpus((cfg.producer_core,))
    result: dict[str, Any] = {
        "benchmark": "live",
        "command": command,
        "machine": describe(),
        "settings": settings_of(cfg) | {"stream_fps": STREAM_FPS, "keyframe_s": 1.0},
        "decode": [],
        "cameras": [],
        "complete": False,
    }
    for size in cfg.sizes:
        with _Server(size, cpus) as server:
            runs = [[_measure(mode, server.url, cfg) for mode in cfg.modes] for _ in range(cfg.repeats)]
        for i, mode in enumerate(cfg.modes):
            row = _median_row([repeat[i] for repeat in runs]) | {"size": show_size(size), "mode": mode}
            result["decode"].append(row)
            _progress(f"{show_size(size)} {mode}: {row}")
        save(result, cfg.out)
    if cfg.cameras:
        broker = LocalBroker().status().pid
        cpus.pin_rest(os.getpid(), broker)
        with _Server(cfg.camera_size, cpus) as server:
            for count in cfg.cameras:
                row = _held([_cameras_step(count, server.url, cfg, cpus) for _ in range(cfg.camera_repeats)])
                result["cameras"].append(row)
                _progress(f"{count} cameras: {row}")
                save(result, cfg.out)
                if not row["holds"]:
                    break
    result["complete"] = True
    save(result, cfg.out)
    _print(result)
    print(f"results: {cfg.out}")
    return result


class _Server:
    """The camera server on the cores the measured process does not use."""

    def __init__(self, size: tuple[int, int], cpus: _Cpus) -> None:
        self.port = free_port()
        self.url = f"rtsp://127.0.0.1:{self.port}/stream"
        footage = samples.fetch() / samples.FOOTAGE.filename
        args = ["--port", str(self.port), "--source", str(footage), "--size", show_size(size)]
        self.command = ["/usr/bin/python3", str(SERVER), *args, "--fps", str(STREAM_FPS), "--bitrate", "4000"]
        self.cpus = cpus

    def __enter__(self) -> "_Server":
        self.process = subprocess.Popen(self.command, stdout=subprocess.PIPE, text=True, preexec_fn=self._pin)
        assert self.process.stdout is not None  # a pipe, as asked
        if not self.process.stdout.readline().startswith("serving"):
            raise RuntimeError("the RTSP camera did not start (see rtsp_camera.py for the packages it needs)")
        return self

    def _pin(self) -> None:
        os.sched_setaffinity(0, self.cpus.rest)

    def __exit__(self, *_exc) -> None:
        self.process.kill()
        self.process.wait()


def _measure(mode: str, url: str, cfg: LiveBenchConfig) -> dict:
    """One mode in a fresh process pinned to the producer's core; its figures."""
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    child = context.Process(
        target=_probe, args=(mode, url, cfg.fps, cfg.warm_up_s, cfg.seconds, cfg.producer_core, queue)
    )
    child.start()
    row = queue.get(timeout=cfg.warm_up_s + cfg.seconds + 60)
    child.join()
    return row


def _probe(mode: str, url: str, fps: float, warm_up_s: float, seconds: float, core: int, queue) -> None:
    """In the child: read ``url`` the ``mode`` way, take a frame every 1/fps s, measure after the warm-up."""
    os.sched_setaffinity(0, {core})
    os.environ["OPENCV_FFMPEG_CAPTURE_OPTIONS"] = "rtsp_transport;tcp"  # as the producer reads RTSP
    reader = _PyAv(url, mode, fps) if mode.startswith("pyav") else _OpenCv(url, mode == "opencv-read")
    period, ages = 1.0 / fps, []
    deadline = time.monotonic() + warm_up_s
    while time.monotonic() < deadline:
        reader.step(False)
    reader.skip()
    cpu0, decoded0, start = _own_cpu(), reader.decoded, time.monotonic()
    due = start
    while (now := time.monotonic()) < start + seconds:
        image = reader.step(now >= due)
        if image is not None:
            due += period
            stamp = read_stamp(image)
            ages.append(None if stamp is None else time.time() * 1000 - stamp[0])
    elapsed = time.monotonic() - start
    cpu, decoded = _own_cpu() - cpu0, reader.decoded - decoded0
    reader.close()
    known = [a for a in ages if a is not None]
    queue.put(
        {
            "cpu_percent": round(100 * cpu / elapsed, 1),
            "pictures_per_s": round(decoded / elapsed, 2),
            "frames_per_s": round(len(ages) / elapsed, 2),
            "stale_p50_ms": round(float(np.percentile(known, 50)), 1) if known else None,
            "stale_p99_ms": round(float(np.percentile(known, 99)), 1) if known else None,
        }
    )


def _own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class _PyAv:
    """facestream's live reader; ``step`` waits for the next picture and converts it when one is wanted."""

    def __init__(self, url: str, mode: str, fps: float) -> None:
        decode = "keyframes" if mode == "pyav-keyframes" else "all"
        self.source = LiveSource(url, LiveSettings(decode=decode, fps=fps))
        self.arrived = threading.Event()
        self.source.listen(self.arrived.set)  # as the producer's sender is woken
        self.source.start()
        self.taken = 0

    @property
    def decoded(self) -> int:
        return self.source.status().decoded

    def skip(self) -> None:
        """Nothing decoded so far is taken."""
        self.taken = self.source.status().decoded

    def step(self, wanted: bool) -> np.ndarray | None:
        picture = self.source.newest(self.taken)
        if picture is None or not wanted:
            self.arrived.clear()
            self.arrived.wait(0.1)
            return None
        self.taken = picture.index
        return picture.frame.to_ndarray(format="bgr24")

    def close(self) -> None:
        self.source.stop()
        self.source.join(1.0)


class _OpenCv:
    """OpenCV's FFmpeg backend: every picture grabbed (decoded), retrieved (converted) when wanted, or
    ``read`` (both) for every picture."""

    def __init__(self, url: str, read_all: bool) -> None:
        self.capture = cv2.VideoCapture(url, cv2.CAP_FFMPEG)
        if not self.capture.isOpened():
            raise RuntimeError(f"OpenCV cannot open {url}")
        self.read_all = read_all
        self.decoded = 0

    def skip(self) -> None:
        """Nothing to skip: each picture is taken as it is grabbed."""

    def step(self, wanted: bool) -> np.ndarray | None:
        image: np.ndarray | None
        if self.read_all:
            ok, image = self.capture.read()
        else:
            ok = self.capture.grab()
            image = self.capture.retrieve()[1] if ok and wanted else None
        self.decoded += ok
        return image if ok and wanted else None

    def close(self) -> None:
        self.capture.release()


def _held(runs: list[dict]) -> dict:
    """One camera count over its repeats: the median of each figure; it holds when every repeat held."""
    figures = {k: float(np.median([r[k] for r in runs if r[k] is not None])) for k in runs[0] if k != "holds"}
    return figures | {"cameras": runs[0]["cameras"], "holds": all(r["holds"] for r in runs), "runs": runs}


def _median_row(rows: list[dict]) -> dict:
    keys = rows[0].keys()
    return {k: float(np.median([r[k] for r in rows if r[k] is not None])) for k in keys} | {"runs": rows}


def _cameras_step(count: int, url: str, cfg: LiveBenchConfig, cpus: _Cpus) -> dict:
    """The producer command with ``count`` cameras on its own core: decoded and sent per camera, staleness."""
    topic = f"bench-live-{uuid.uuid4().hex[:8]}.frames"
    kafka_topics.ensure_topics({topic: 4, f"{topic}.status": 4})
    port = free_port()
    cameras = [(f"cam-{i}", f"{url}?camera={i}") for i in range(count)]
    config = ProducerConfig(
        fps=cfg.fps, frames_topic=topic, status_topic=f"{topic}.status", http_port=port, stats_interval_s=60.0
    )
    process = subprocess.Popen(
        producer_command(cameras, config),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=cpus.pin_producer,
    )
    try:
        _wait_streaming(port, count)
        time.sleep(cfg.warm_up_s)
        before, cpu0, start = _counters(port), sum(cpu_seconds(process.pid)[:2]), time.time()
        time.sleep(cfg.seconds)
        after, cpu1, end = _counters(port), sum(cpu_seconds(process.pid)[:2]), time.time()
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=60)
    elapsed = end - start
    decoded = [(after[c]["decoded"] - before[c]["decoded"]) / elapsed for c, _ in cameras]
    sent = [(after[c]["sent"] - before[c]["sent"]) / elapsed for c, _ in cameras]
    stale = _staleness(topic, start, end)
    holds = (
        min(decoded) >= HOLDS_SHARE * STREAM_FPS
        and min(sent) >= HOLDS_SHARE * cfg.fps
        and bool(stale)
        and float(np.percentile(stale, 99)) < STALE_LIMIT_MS
    )
    return {
        "cameras": count,
        "producer_cores": round((cpu1 - cpu0) / elapsed, 2),
        "decoded_per_camera_min": round(min(decoded), 2),
        "sent_per_camera_min": round(min(sent), 2),
        "sent_per_camera_mean": round(float(np.mean(sent)), 2),
        "stale_p50_ms": round(float(np.percentile(stale, 50)), 1) if stale else None,
        "stale_p99_ms": round(float(np.percentile(stale, 99)), 1) if stale else None,
        "frames_read_back": len(stale),
        "holds": holds,
    }


def _wait_streaming(port: int, count: int, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if sum(c["up"] for c in _counters(port).values()) == count:
                return
        except OSError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"{count} cameras did not all stream within {timeout_s:.0f} s")


def _counters(port: int) -> dict[str, dict[str, float]]:
    """Per camera: pictures decoded, frames sent, streaming (1/0), from the producer's /metrics."""
    import urllib.request

    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        text = response.read().decode()
    names = {
        "facestream_producer_pictures_decoded_total": "decoded",
        "facestream_producer_frames_sent_total": "sent",
        "facestream_producer_camera_up": "up",
    }
    found: dict[str, dict[str, float]] = {}
    for line in text.splitlines():
        name, _, rest = line.partition("{")
        if name in names and rest.startswith('camera="'):
            camera = rest.split('"')[1]
            found.setdefault(camera, {})[names[name]] = float(line.rsplit(" ", 1)[1])
    return found


def _staleness(topic: str, start: float, end: float) -> list[float]:
    """Staleness (ms) of the frames captured between ``start`` and ``end`` (Unix s), from their stamps."""
    ages: list[float] = []
    quiet_since = time.monotonic()

    def done() -> bool:
        return time.monotonic() - quiet_since > 5.0

    for msg in kafka_reading.records(topic, done):
        quiet_since = time.monotonic()
        frame = unpack_frame(msg.value())
        if not start <= frame.capture_ts_ns / 1e9 <= end:
            continue
        stamp = read_stamp(cv2.imdecode(np.frombuffer(frame.data, np.uint8), cv2.IMREAD_COLOR))
        if stamp is not None:
            ages.append(frame.capture_ts_ns / 1e6 - stamp[0])
    return ages


def _print(result: dict) -> None:
    for row in result["decode"]:
        print(
            f"{row['size']:>9} {row['mode']:<15} cpu {row['cpu_percent']:5.1f}%  "
            f"pictures/s {row['pictures_per_s']:5.1f}  frames/s {row['frames_per_s']:4.1f}  "
            f"stale p50 {row['stale_p50_ms']} ms p99 {row['stale_p99_ms']} ms"
        )
    for row in result["cameras"]:
        print(
            f"{row['cameras']:>3} cameras: producer {row['producer_cores']:.2f} cores, decoded/s min "
            f"{row['decoded_per_camera_min']}, sent/s min {row['sent_per_camera_min']}, stale p99 "
            f"{row['stale_p99_ms']} ms, {'holds' if row['holds'] else 'does not hold'}"
        )


def render(result: dict) -> list[str]:
    m, s = result["machine"], result["settings"]
    lines = [
        f"**Live RTSP cameras, {m['cores']} cores of an {m['cpu']}** (`{result['command']}`; GStreamer's RTSP "
        f"server streaming vtest.avi (768x576, scaled) as H.264 at {s['stream_fps']} fps with a keyframe every "
        f"{s['keyframe_s']:g} s; staleness: when a frame was taken or sent minus when the server sent it, read from "
        "its stamp)."
    ]
    if result["decode"]:
        lines += [
            "",
            f"Decoding one camera, {s['fps']:g} frames a second taken; each mode in a process of its own pinned "
            f"to core {s['producer_core']}, the server on the others; median of {s['repeats']} runs of "
            f"{s['seconds']:g} s:",
            "",
            "| stream | mode | CPU (% of a core) | pictures decoded/s | frames taken/s | staleness p50 | p99 |",
            "|---|---|---|---|---|---|---|",
        ]
    for r in result["decode"]:
        lines.append(
            f"| {r['size']} | {r['mode']} | {r['cpu_percent']:.1f} | {r['pictures_per_s']:.1f} "
            f"| {r['frames_per_s']:.1f} | {r['stale_p50_ms']:.0f} ms | {r['stale_p99_ms']:.0f} ms |"
        )
    if result["cameras"]:
        lines += [
            "",
            f"Cameras one producer core holds: `facestream produce` pinned to core {s['producer_core']}, "
            f"{s['camera_size'][0]}x{s['camera_size'][1]} cameras (each its own client of the server) at "
            f"{s['fps']:g} frames a second, {s['seconds']:g} s per step after {s['warm_up_s']:g} s, "
            f"{s.get('camera_repeats', 1)} run(s) per count (medians shown); a count holds when in every run every "
            "camera decodes at least 95% of the stream's pictures and sends at least 95% of its frames, with the "
            "staleness of the frames sent (read back from Kafka) under 500 ms at p99:",
            "",
            "| cameras | producer's CPU (cores) | pictures decoded/s, least camera | frames sent/s, least camera "
            "| staleness p50 | p99 | holds |",
            "|---|---|---|---|---|---|---|",
        ]
        for r in result["cameras"]:
            lines.append(
                f"| {r['cameras']} | {r['producer_cores']:.2f} | {r['decoded_per_camera_min']:.1f} "
                f"| {r['sent_per_camera_min']:.2f} | {r['stale_p50_ms']:.0f} ms | {r['stale_p99_ms']:.0f} ms "
                f"| {'yes' if r['holds'] else '**no**'} |"
            )
    lines += ["", source(result)]
    return lines


def cameras_per_core(result: dict) -> int:
    """The most cameras one producer core held in a live run (0 if none)."""
    return max((r["cameras"] for r in result["cameras"] if r["holds"]), default=0)


def targets(results: dict[str, dict]) -> list[Target]:
    """Frames' staleness at the camera counts that held, in the most repeated sweep."""
    runs = [r for r in runs_of(results, "live") if r["cameras"]]
    if not runs:
        return []
    run = max(runs, key=lambda r: r["settings"].get("camera_repeats", 1))
    kept = [count for count in run["cameras"] if count["holds"]]
    worst = max((count["stale_p99_ms"] for count in kept), default=0.0)
    size = "x".join(map(str, run["settings"]["camera_size"]))
    return [
        Target(
            f"Live RTSP camera ({size}, 25 fps in, 5 out): frames < 0.5 s old at p99",
            f"{worst:.0f} ms at most; one producer core holds {cameras_per_core(run)} cameras"
            if kept
            else "no step held",
            bool(kept) and worst < 500,
            run["_file"],
            f"{worst:.0f} ms; {cameras_per_core(run)} per core" if kept else None,
        )
    ]
