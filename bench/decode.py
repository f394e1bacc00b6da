"""JPEG decoding alone: the detector's decoders and nvImageCodec set-ups side by side, in one run.

Inside the detector on the H200, GPU decoding took 0.3-0.7 ms per frame against nvImageCodec's
0.04-0.06 standalone. This benchmark times ``Preprocessor`` (the CPU pool) and ``GpuPreprocessor``
under several ``GpuDecodeSettings`` on the same frames (the sample photos, 640 px wide, or all of one
size as cameras send them), first with the GPU otherwise idle, then while an engine (YuNet FP16 at the
same batch) replays on it without pause, as inference does in the detector, and (``python_load``)
while a thread of the same process runs Python half of the time, as the detector's event-building
thread does: decoding needs the interpreter back for every image, so this shows what waiting for it
costs. Each figure is the median of the repeats.
"""

import statistics
import threading
import time
from concurrent.futures import Future
from typing import Any

from bench import save, settings_of
from bench.engine import _model_file, _progress
from bench.figures import source
from bench.machine import describe
from bench.pipeline import full_batches, jpeg_corpus
from bench.settings import DecodeBenchConfig, EngineBenchConfig
from facestream.detector_service import models
from facestream.detector_service.decoding import preprocess_gpu
from facestream.detector_service.decoding.gpu_decode_settings import GpuDecodeSettings
from facestream.detector_service.decoding.preprocess import Preprocessor
from facestream.detector_service.decoding.preprocess_gpu import GpuPreprocessor
from facestream.detector_service.inference.engine import Engine

CPU = "cpu"  # the thread-pool decoder, always measured first


def run(cfg: DecodeBenchConfig, command: str) -> dict:
    for variant in cfg.variants:
        GpuDecodeSettings.parse(variant)  # a typo fails before anything is timed
    frames = jpeg_corpus(cfg.width, cfg.frames, cfg.frame_size)
    batches = full_batches(frames, cfg.batch)
    missing = preprocess_gpu.available()
    load = _Load(cfg) if cfg.load and missing is None else None
    rows: list[dict] = []
    result: dict[str, Any] = {
        "benchmark": "decode",
        "command": command,
        "machine": describe(),
        "settings": settings_of(cfg),
        "mean_frame_bytes": round(sum(len(f.data) for f in frames) / len(frames)),
        "rows": rows,  # filled in place; saved after each variant
    }
    for variant in (CPU, *cfg.variants):
        if variant != CPU and missing is not None:
            rows.append({"variant": variant, "error": f"not run: {missing}"})
            continue
        rows.append(_measure(cfg, variant, batches, load))
        _progress(f"{variant}: {rows[-1]}")
        save({**result, "complete": False}, cfg.out)
    if load is not None:
        load.close()
    result["complete"] = True
    save(result, cfg.out)
    print(f"{'decoder':<16} {'images/s':>10} {'under load':>11} {'Python busy':>12} {'thread ms/batch':>16}")
    for row in rows:
        idle, loaded = row.get("images_per_s"), row.get("images_per_s_under_load")
        python, cpu = row.get("images_per_s_under_python_load"), row.get("thread_cpu_ms_per_batch")
        print(
            f"{row['variant']:<16} {idle or '-':>10} {loaded or '-':>11} {python or '-':>12} {cpu or '-':>16} "
            f"{row.get('error', '')}"
        )
    print(f"results: {cfg.out}")
    return result


def _measure(cfg: DecodeBenchConfig, variant: str, batches: list, load: "_Load | None") -> dict:
    """Images/s of one decoder, GPU idle and (with ``load``) GPU busy; a variant that fails says why."""
    try:
        decoder = (
            Preprocessor((cfg.height, cfg.width), cfg.cpu_threads)
            if variant == CPU
            else GpuPreprocessor((cfg.height, cfg.width), settings=GpuDecodeSettings.parse(variant))
        )
    except Exception as exc:  # an nvImageCodec set-up this build refuses: a result, not a crash
        return {"variant": variant, "error": f"{type(exc).__name__}: {exc}"}
    try:
        decoder.run(batches[0])  # start-up (nvImageCodec's first decode takes about a second)
        rate, thread_ms = _images_per_s(decoder, batches, cfg.repeats)
        row = {"variant": variant, "images_per_s": rate, "thread_cpu_ms_per_batch": thread_ms}
        if load is not None:
            with load:
                row["images_per_s_under_load"] = _images_per_s(decoder, batches, cfg.repeats)[0]
        if cfg.python_load:
            with _PythonLoad(cfg.python_load):
                row["images_per_s_under_python_load"] = _images_per_s(decoder, batches, cfg.repeats)[0]
        return row
    finally:
        decoder.close()


def _images_per_s(decoder, batches: list, repeats: int) -> tuple[float, float]:
    """Images/s, and the calling thread's CPU time per batch (ms): what a detector's decoding thread
    spends of its own on a batch, in Python and in the decoder's host code, rather than waiting for
    the GPU. Medians of the repeats."""
    rates, cpu_ms = [], []
    for _ in range(repeats):
        start, cpu = time.perf_counter(), time.thread_time()
        for batch in batches:
            decoder.run(batch)
        rates.append(sum(len(b) for b in batches) / (time.perf_counter() - start))
        cpu_ms.append((time.thread_time() - cpu) * 1000 / len(batches))
    return round(statistics.median(rates), 1), round(statistics.median(cpu_ms), 2)


class _PythonLoad:
    """A thread that runs Python bytecode for ``share`` of each 10 ms and sleeps the rest."""

    PERIOD_S = 0.01

    def __init__(self, share: float) -> None:
        self.share = share
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> None:
        self._thread.start()

    def __exit__(self, *_exc) -> None:
        self._stop.set()
        self._thread.join()

    def _loop(self) -> None:
        while not self._stop.is_set():
            busy_until = time.perf_counter() + self.PERIOD_S * self.share
            while time.perf_counter() < busy_until:
                sum(i * i for i in range(50))
            time.sleep(self.PERIOD_S * (1 - self.share))


class _Load:
    """YuNet FP16 at the benchmark's batch, replaying on its engine thread for as long as asked."""

    def __init__(self, cfg: DecodeBenchConfig) -> None:
        engine_cfg = EngineBenchConfig(
            model="yunet",
            batches=(cfg.batch,),
            precision="fp16",
            provider="cuda",
            height=cfg.height,
            width=cfg.width,
            baselines=(),
            out=cfg.out,
        )
        _, path, _ = _model_file(engine_cfg)
        plugin = models.plugin_for(models.read_metadata(path), str(path))
        self.engine = Engine(path, (cfg.height, cfg.width), cfg.batch, plugin, "cuda", buckets=(cfg.batch,))
        self._stop = threading.Event()
        self._done: Future | None = None

    def __enter__(self) -> None:
        self._stop.clear()
        self._done = self.engine.thread.submit(self._loop)

    def __exit__(self, *_exc) -> None:
        self._stop.set()
        if self._done is not None:
            self._done.result()

    def _loop(self) -> None:
        batch = self.engine.buckets[-1]
        while not self._stop.is_set():
            self.engine.replay(batch)

    def close(self) -> None:
        self.engine.close()


def render(result: dict) -> list[str]:
    m, s = result["machine"], result["settings"]
    size = s.get("frame_size")
    frames = f"{size[0]}x{size[1]} frames cut from the sample photos" if size else "the sample photos at 640 px wide"
    python = "python_load" in s and s["python_load"] > 0
    thread = any("thread_cpu_ms_per_batch" in r for r in result["rows"])
    lines = [
        f"**JPEG decoding alone, batch {s['batch']}, {m.get('gpu', m['cpu'])}** (`{result['command']}`; "
        f"{frames}, {result['mean_frame_bytes'] / 1000:.0f} KB; "
        f"images/s, median of {s['repeats']}; "
        "under load = while YuNet FP16 replays on the GPU without pause"
        + (
            f"; Python busy = while a thread of the process runs Python {s['python_load']:.0%} of the time"
            if python
            else ""
        )
        + ("; thread ms/batch = the calling thread's CPU time per batch, GPU idle" if thread else "")
        + "):",
        "",
        "| decoder | images/s | under load |"
        + (" Python busy |" if python else "")
        + (" thread ms/batch |" if thread else "")
        + " note |",
        "|---|---|---|" + ("---|" if python else "") + ("---|" if thread else "") + "---|",
    ]
    for r in result["rows"]:
        cells = [r.get("images_per_s"), r.get("images_per_s_under_load")]
        if python:
            cells.append(r.get("images_per_s_under_python_load"))
        if thread:
            cells.append(r.get("thread_cpu_ms_per_batch"))
        shown = " | ".join("-" if v is None else f"{v}" for v in cells)
        lines.append(f"| {r['variant']} | {shown} | {r.get('error', '')} |")
    lines += [
        "",
        f"`cpu` is the thread pool ({s['cpu_threads']} threads); the others are nvImageCodec set-ups "
        "(backends all|hw|gpu|hybrid, /keep: decoding into the previous batch's Images, /tN: N host threads, "
        "/cN: N images per call, else the whole batch in one). " + source(result),
    ]
    return lines
