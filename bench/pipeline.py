"""Pipeline benchmark: JPEG bytes in memory -> events, against the engine alone, in one run.

Runs the detector's own ``FrameProcessor`` exactly as the service does (decode of batch N+1 in
threads while batch N infers), then serialises every event with the schema codec: everything the
detector does per frame except Kafka. The engine-only figure is the same engine replaying the same
batch size with its input resident on the device, so their ratio is the cost of everything around
the model.
"""

import functools
import multiprocessing
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from bench import save, settings_of
from bench.engine import _model_file, _progress
from bench.figures import Target, runs_of, source
from bench.machine import describe
from bench.settings import PipelineBenchConfig
from facestream import samples
from facestream.detector_service import models
from facestream.detector_service.decoding.gpu_decode_settings import GpuDecodeSettings
from facestream.detector_service.inference.embedder import Embedder
from facestream.detector_service.inference.engine import Engine, InferenceEngine
from facestream.detector_service.owner.launch import start_owner
from facestream.detector_service.owner.remote import RemoteProcessor
from facestream.detector_service.processor import FrameProcessor
from facestream.detector_service.stats import STAGES, Stats
from facestream.detector_service.tracks import Policy
from facestream.producers.encoder import JpegEncoder
from facestream.producers.sources import read_image
from facestream.schemas import Frame, PoseEvent, pack_detection, pack_pose


def jpeg_corpus(width: int, count: int, frame_size: tuple[int, int] | None = None) -> list[Frame]:
    """The sample photos scaled to ``width`` (or cover-cropped to ``frame_size``, as ``produce
    --frame-size`` sends them) and JPEG-encoded (quality 85), cycled to ``count`` frames."""
    folder = samples.fetch()
    encoded = []
    for f in samples.PORTRAITS + samples.ANNOTATED:
        picture = read_image(folder / f.filename)
        size = frame_size or (width, max(1, round(picture.height * width / picture.width)))
        encoded.append(JpegEncoder(85, frame_size=size).encode(picture))
    return [
        Frame("bench", i, time.time_ns(), w, h, data)
        for i, (data, w, h) in ((i, encoded[i % len(encoded)]) for i in range(count))
    ]


def run(cfg: PipelineBenchConfig, command: str) -> dict:
    _, path, _ = _model_file(cfg)
    processor = _processor(cfg, path)
    engine = processor.engine
    batches = _batches(cfg)
    workers = _Fronts(cfg, path) if cfg.fronts else _Workers(cfg, path) if cfg.workers > 1 else None
    engine_fps, pipeline_fps = [], []
    for repeat in range(cfg.repeats):
        engine_fps.append(_engine_only(engine, cfg.batch, len(batches)))
        pipeline_fps.append(workers.run() if workers else _pipeline(processor, batches))
        _progress(f"repeat {repeat + 1}: engine only {engine_fps[-1]:.0f} frames/s, pipeline {pipeline_fps[-1]:.0f}")
    processor.close()
    stats = workers.close() if workers else processor.stats
    engine_median, pipeline_median = statistics.median(engine_fps), statistics.median(pipeline_fps)
    result: dict[str, Any] = {
        "benchmark": "pipeline",
        "command": command,
        "machine": describe(),
        "settings": settings_of(cfg),
        "model_file": path.name,
        "provider": engine.provider,
        "decoder": stats.decoder,
        "engine_only_frames_per_s": round(engine_median, 1),
        "pipeline_frames_per_s": round(pipeline_median, 1),
        "overhead_fraction": round(1.0 - pipeline_median / engine_median, 4),
        "runs": {"engine_only": [round(v, 1) for v in engine_fps], "pipeline": [round(v, 1) for v in pipeline_fps]},
        "ms_per_frame": stats.ms_per_frame(frames=stats.batches * cfg.batch, digits=4),
    }
    save(result, cfg.result_file)
    print(
        f"{cfg.model} batch {cfg.batch} on {engine.provider}: engine only {engine_median:.0f} frames/s, "
        f"pipeline (JPEG -> serialised events) {pipeline_median:.0f} frames/s, "
        f"overhead {100 * result['overhead_fraction']:.1f}%; results: {cfg.result_file}"
    )
    return result


def _processor(
    cfg: PipelineBenchConfig, path: Path, largest: int | None = None, policy: Policy | None = None
) -> FrameProcessor:
    """The detector's own engine and processor for ``path``, warmed up: buckets of the batch and, for an
    owner merging the fronts' batches, of its ``largest`` run; with an embedder, faces embedded as
    ``policy`` says (the detector's default)."""
    if cfg.switch_interval_ms is not None:
        sys.setswitchinterval(cfg.switch_interval_ms / 1000)
    plugin = models.plugin_for(models.read_metadata(path), str(path))
    largest = largest or cfg.batch
    buckets = tuple(sorted({cfg.batch, largest}))
    engine = Engine(path, (cfg.height, cfg.width), largest, plugin, cfg.provider, buckets=buckets)
    stats = Stats(provider=engine.provider, fallback=bool(engine.fallbacks))
    embedder = None if cfg.embedder == "none" else Embedder(cfg.embedder, engine.provider, landmarks=plugin.landmarks)
    processor = FrameProcessor(
        engine,
        plugin,
        plugin.default_thresholds,
        cfg.decode_threads,
        stats,
        cfg.decode,
        GpuDecodeSettings.parse(cfg.gpu_decoder),
        embedder,
        policy,
    )
    processor.warm_up()
    return processor


def _batches(cfg: PipelineBenchConfig) -> list[list[Frame]]:
    return full_batches(jpeg_corpus(cfg.width, cfg.frames, cfg.frame_size), cfg.batch)


def full_batches(frames: list[Frame], batch: int) -> list[list[Frame]]:
    """``frames`` in batches of ``batch``; a partial last one is left out (every batch times the same)."""
    return [frames[i : i + batch] for i in range(0, len(frames) - batch + 1, batch)]


class _Workers:
    """``cfg.workers`` detector processes sharing the GPU, as replicas of one consumer group would: each
    has its own engine and processor and takes every n-th batch. Python runs one thread at a time per
    process, so the host work around a fast model (box decoding, events) scales with processes."""

    def __init__(self, cfg: PipelineBenchConfig, path: Path) -> None:
        self._start_all(cfg.workers, lambda index: (_worker, (cfg, path, index)))

    def _start_all(self, count: int, task) -> None:
        """``count`` processes, the ``index``-th running ``task(index)``'s (function, arguments) with the
        start barrier and the two result queues added."""
        context = multiprocessing.get_context("spawn")  # a forked child cannot use its parent's CUDA context
        self._start = context.Barrier(count + 1)
        self._counts, self._stats = context.Queue(), context.Queue()
        self._processes = []
        for index in range(count):
            target, args = task(index)
            process = context.Process(target=target, args=(*args, self._start, self._counts, self._stats), daemon=True)
            process.start()
            self._processes.append(process)

    def run(self) -> float:
        """One repeat: all workers start together (each is warm); frames/s of them all, start to last end."""
        self._start.wait()
        start = time.perf_counter()
        done = sum(self._counts.get() for _ in self._processes)
        return done / (time.perf_counter() - start)

    def close(self) -> Stats:
        """Wait for the workers; their stage times summed, as one processor's would be."""
        total = Stats(provider="", fallback=False)
        for stats in (self._stats.get() for _ in self._processes):
            total.provider, total.decoder = stats.provider, stats.decoder
            for name in ("batches", *(f"{stage}_s" for stage in STAGES)):
                setattr(total, name, getattr(total, name) + getattr(stats, name))
        for process in self._processes:
            process.join()
        return total


class _Fronts(_Workers):
    """One GPU owner process (decoder, engine, embedder) answering ``cfg.fronts`` front processes, each
    taking every n-th batch through shared memory and building its events, as ``detect --fronts``
    runs them."""

    def __init__(self, cfg: PipelineBenchConfig, path: Path) -> None:
        run = functools.partial(_processor, cfg, path, cfg.owner_batch or cfg.batch)
        self._owner, ends = start_owner(run, cfg.fronts)
        self._start_all(cfg.fronts, lambda index: (_front, (cfg, ends[index], index, cfg.fronts)))

    def close(self) -> Stats:
        total = super().close()
        self._owner.join()
        return total


def _worker(cfg: PipelineBenchConfig, path: Path, index: int, start, counts, stats) -> None:
    _serve_share(cfg, _processor(cfg, path), index, cfg.workers, start, counts, stats)


def _front(cfg: PipelineBenchConfig, connection, index: int, fronts: int, start, counts, stats) -> None:
    _serve_share(cfg, RemoteProcessor(connection), index, fronts, start, counts, stats)


def _serve_share(cfg: PipelineBenchConfig, processor, index: int, processes: int, start, counts, stats) -> None:
    """Every ``processes``-th batch from the ``index``-th, once per repeat, all processes starting together."""
    batches = _batches(cfg)[index::processes]
    for _ in range(cfg.repeats):
        start.wait()
        _pipeline(processor, batches)
        counts.put(sum(len(b) for b in batches))
    processor.close()
    stats.put(processor.stats)


def _engine_only(engine: InferenceEngine, batch: int, count: int) -> float:
    images = np.random.default_rng(0).integers(0, 256, (batch, *engine.input_hw, 3), dtype=np.uint8)
    engine.run(images)

    def measure() -> float:
        start = time.perf_counter()
        for _ in range(count):
            if engine.on_gpu:
                engine.replay(batch)
            else:
                engine.run(images)
        return count * batch / (time.perf_counter() - start)

    return engine.thread.submit(measure).result()  # on the engine's thread: no hand-over per run


def _pipeline(processor: FrameProcessor, batches: list[list[Frame]]) -> float:
    """Frames/s through ``processor``, as the service drives it (batch N+1 begun before batch N is finished)."""
    return run_batches(processor, batches)[0]


def run_batches(processor: FrameProcessor, batches: list[list[Frame]]) -> tuple[float, int]:
    """(frames/s, faces or people found) for ``batches`` through ``processor``, every event serialised."""
    found = 0

    def seen(event) -> None:
        nonlocal found
        # As the service's publisher packs the events it built.
        if isinstance(event, PoseEvent):
            pack_pose(event, check=False)
            found += len(event.persons)
        else:
            pack_detection(event, check=False)
            found += len(event.faces)

    return drive(processor, batches, seen), found


def drive(processor: FrameProcessor, batches: list[list[Frame]], seen: Callable[[Any], None]) -> float:
    """Frames/s for ``batches`` through ``processor`` as the service drives it (batch N+1 begun before
    batch N is finished); ``seen`` gets every event."""
    start = time.perf_counter()
    pending, done = None, 0
    for frames in batches + [None]:
        following = processor.begin(frames, list(range(len(frames)))) if frames else None
        if pending is not None:
            for outcome in processor.finish(pending):
                seen(outcome.event)
                done += 1
        pending = following
    return done / (time.perf_counter() - start)


# Pipeline files made before the stages had one name everywhere (detector_service.stats.STAGES).
OLD_STAGE_NAMES = {"decode_busy": "decode", "infer_incl_copies": "infer"}


def render(result: dict) -> list[str]:
    s, m = result["settings"], result["machine"]
    split = {OLD_STAGE_NAMES.get(name, name): ms for name, ms in result["ms_per_frame"].items()}
    return [
        f"**Pipeline, {s['model']} {s['precision'].upper()}, batch {s['batch']}, {processes(s)}, "
        + (f"frames {s['frame_size'][0]}x{s['frame_size'][1]}, " if s.get("frame_size") else "")
        + (f"{s['embedder']} embeddings on, " if s.get("embedder", "none") != "none" else "")
        + "JPEG decoding on the "
        f"{result.get('decoder', 'cpu').upper()}{_gpu_decoder(result)}"
        + (f", thread switch interval {s['switch_interval_ms']:g} ms" if s.get("switch_interval_ms") else "")
        + f", {m.get('gpu', '?')}** "
        f"(`{result['command']}`): JPEG bytes -> serialised events **{result['pipeline_frames_per_s']:.0f} frames/s** "
        f"against the engine alone at **{result['engine_only_frames_per_s']:.0f}**: everything around the model costs "
        f"**{100 * result['overhead_fraction']:.1f}%** (runs: {result['runs']}). Per frame: "
        + (f"decoding busy {split['decode']} ms in its own thread, " if "decode" in split else "")
        + "waiting for decode "
        f"{split['decode_wait']} ms (the rest overlaps inference), inference with host copies "
        f"{split['infer']} ms, "
        + (f"embeddings ({s['embedder']}) {split['embed']} ms, " if s.get("embedder", "none") != "none" else "")
        + f"boxes + events {split['postprocess']} ms. "
        + source(result)
    ]


def processes(settings: dict) -> str:
    """How the pipeline ran: detector processes each with the whole processor, or one GPU owner
    answering front processes (``--fronts``)."""
    fronts, workers = settings.get("fronts", 0), settings.get("workers", 1)
    if fronts:
        return f"one GPU owner process answering {fronts} front process{'es' if fronts > 1 else ''}"
    return f"{workers} detector process{'es' if workers > 1 else ''}"


def _gpu_decoder(result: dict) -> str:
    """`` (nvImageCodec hw/keep)`` for GPU decoding; runs from before ``--gpu-decoder`` used ``all``."""
    return f" (nvImageCodec {result['settings'].get('gpu_decoder', 'all')})" if result.get("decoder") == "gpu" else ""


def mogface_pipeline(results: dict[str, dict]) -> dict | None:
    runs = runs_of(results, "pipeline", model="mogface", precision="fp16", provider="cuda")
    return max(runs, key=lambda r: r["settings"]["frames"], default=None)


def yunet_gpu_pipelines(results: dict[str, dict]) -> list[dict]:
    """YuNet FP16 pipelines on the GPU decoding there, without embeddings (YuNet named, or its file given:
    the GPU machine's runs pass the FP16 file made before the run)."""
    return [
        r
        for r in runs_of(results, "pipeline", precision="fp16", provider="cuda")
        if (r["settings"]["model"] == "yunet" or r.get("model_file", "").startswith("yunet"))
        and r["settings"].get("decode") != "cpu"
        and r["settings"].get("embedder", "none") == "none"
    ]


def targets(results: dict[str, dict]) -> list[Target]:
    """What everything around the model costs (MogFace), and YuNet's frames/s through the pipeline:
    the best of one detector process or several sharing the GPU as replicas would."""
    found = []
    mogface = mogface_pipeline(results)
    if mogface:
        found.append(
            Target(
                "Pipeline costs <= 5% of engine-only throughput (MogFace)",
                f"{100 * mogface['overhead_fraction']:.1f}%",
                mogface["overhead_fraction"] <= 0.05,
                mogface["_file"],
            )
        )
    yunet = yunet_gpu_pipelines(results)
    if yunet:
        best = max(yunet, key=lambda r: r["pipeline_frames_per_s"])
        # "One" is the one-process run on the same frames as the best (640x480 or the photos as they are).
        alone = [
            r
            for r in yunet
            if r["settings"].get("workers", 1) == 1
            and not r["settings"].get("fronts")
            and r["settings"].get("frame_size") == best["settings"].get("frame_size")
        ]
        one = max(alone, key=lambda r: r["pipeline_frames_per_s"], default=None)
        found.append(
            Target(
                "YuNet pipeline >= 10,000 frames/s",
                f"{best['pipeline_frames_per_s']:.0f} frames/s with {processes(best['settings'])} "
                f"(one process: {one['pipeline_frames_per_s']:.0f})"
                if one
                else None,
                best["pipeline_frames_per_s"] >= 10_000,
                best["_file"],
                f"{best['pipeline_frames_per_s']:.0f} frames/s"
                + (f", GPU owner + {best['settings']['fronts']} fronts" if best["settings"].get("fronts") else ""),
            )
        )
    return found
