"""Pose benchmark: MoveNet through the inference service's own processor, on real CCTV footage.

The frames are OpenCV's ``vtest.avi`` (768x576, pedestrians walking past a fixed camera) as JPEGs.
For each batch size the processor runs them as the service does (batch N+1 decoding while batch N
infers; MoveNet's decoding of people batched, see docs/pose.md), every pose event serialised; the
median of the repeats is reported. What the model found is reported too: people per frame and
their scores, which is what the fall rule's thresholds have to work with.
"""

import statistics
import time
from typing import Any

import cv2
import numpy as np

from bench import save, settings_of
from bench.engine import _progress, fp16_copy
from bench.figures import Target, numbers, runs_of, source
from bench.machine import describe
from bench.pipeline import drive, full_batches
from bench.settings import PoseBenchConfig
from facestream import samples
from facestream.detector_service import models
from facestream.detector_service.inference.engine import Engine
from facestream.detector_service.processor import FrameProcessor
from facestream.detector_service.stats import Stats
from facestream.schemas import Frame, pack_pose


def video_frames(count: int) -> list[Frame]:
    """The first ``count`` frames of vtest.avi as JPEG frames (quality 90), captured at its 10 fps."""
    video = cv2.VideoCapture(str(samples.fetch() / samples.FOOTAGE.filename))
    start, step_ns = time.time_ns(), round(1e9 / video.get(cv2.CAP_PROP_FPS))
    frames: list[Frame] = []
    while len(frames) < count:
        ok, image = video.read()
        if not ok:
            break
        data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 90])[1].tobytes()
        frames.append(Frame("street", len(frames), start + len(frames) * step_ns, image.shape[1], image.shape[0], data))
    return frames


def run(cfg: PoseBenchConfig, command: str) -> dict:
    path = models.resolve("movenet")
    if cfg.precision == "fp16":
        path = fp16_copy(path)
    plugin = models.plugin_for(models.read_metadata(path), str(path))
    frames = video_frames(cfg.frames)
    rows, people = [], None
    for batch in cfg.batch:
        engine = Engine(path, plugin.input_spec.resolve(None), batch, plugin, cfg.provider)
        processor = FrameProcessor(
            engine,
            plugin,
            plugin.default_thresholds,
            cfg.decode_threads,
            Stats(engine.provider, bool(engine.fallbacks)),
        )
        processor.warm_up()
        runs = []
        for _ in range(cfg.repeats):
            fps, found = _run(processor, full_batches(frames, batch))
            runs.append(fps)
            people = people or found
        processor.close()
        rows.append(
            {"batch": batch, "frames_per_s": round(statistics.median(runs), 1), "runs": [round(r, 1) for r in runs]}
        )
        _progress(f"batch {batch}: {rows[-1]['frames_per_s']:.1f} frames/s on {engine.provider}")
    assert people is not None  # every batch size ran at least one repeat
    counts = [len(event_people) for event_people in people]
    scores = [score for event_people in people for score in event_people]
    result: dict[str, Any] = {
        "benchmark": "pose",
        "command": command,
        "machine": describe(),
        "settings": settings_of(cfg),
        "model_file": path.name,
        "provider": engine.provider,
        "input_size": list(plugin.input_spec.resolve(None)),
        "rows": rows,
        "people": {
            "frames": len(counts),
            "per_frame_mean": round(float(np.mean(counts)), 2),
            "frames_with_people": round(sum(c > 0 for c in counts) / max(len(counts), 1), 3),
            "score_quantiles": {q: round(float(np.quantile(scores, q / 100)), 3) for q in (10, 50, 90)}
            if scores
            else {},
        },
    }
    save(result, cfg.result_file)
    print(
        f"movenet on {engine.provider}: "
        + ", ".join(f"batch {r['batch']} {r['frames_per_s']:.0f} frames/s" for r in rows)
    )
    return result


def _run(processor: FrameProcessor, batches: list[list[Frame]]) -> tuple[float, list[list[float]]]:
    """(frames/s, each frame's people's scores) through ``processor`` as the service drives it."""
    found: list[list[float]] = []

    def seen(event) -> None:
        pack_pose(event)
        found.append([p.score for p in event.persons])

    return drive(processor, batches, seen), found


def render(result: dict) -> list[str]:
    s, m, people = result["settings"], result["machine"], result["people"]
    rows = "; ".join(
        f"batch {r['batch']} **{r['frames_per_s']:.0f} frames/s** (runs: {numbers(r['runs'])})" for r in result["rows"]
    )
    quantiles = ", ".join(f"p{q} {v:g}" for q, v in people["score_quantiles"].items())
    where = m.get("gpu") or f"{m['cores']} CPU cores"
    return [
        f"**Body pose, MoveNet MultiPose Lightning ({s.get('precision', 'fp32')}) on {result['provider']}, {where}** "
        f"(`{result['command']}`): {s['frames']} frames of OpenCV's vtest.avi (768x576 pedestrians) through the "
        f"service's processor at input {result['input_size'][1]}x{result['input_size'][0]}, pose events serialised, "
        f"median of {s['repeats']} runs: {rows}. People found: {people['per_frame_mean']:g} per frame, in "
        f"{100 * people['frames_with_people']:.0f}% of the frames; person scores {quantiles}. "
        + (f"{result['note'][0].upper()}{result['note'][1:]}. " if result.get("note") else "")
        + source(result)
    ]


def targets(results: dict[str, dict]) -> list[Target]:
    """MoveNet's best frames/s on the GPU."""
    runs = [r for r in runs_of(results, "pose") if r["provider"] == "cuda"]
    if not runs:
        return []
    run = max(runs, key=lambda r: max(row["frames_per_s"] for row in r["rows"]))
    row = max(run["rows"], key=lambda row: row["frames_per_s"])
    return [
        Target(
            "MoveNet >= 3,000 frames/s (bench pose)",
            f"{row['frames_per_s']:.0f} frames/s at batch {row['batch']}",
            row["frames_per_s"] >= 3000,
            run["_file"],
        )
    ]
