"""Embedding benchmark: what identity embeddings cost the detector, measured side by side in one run.

1. The embedder alone, per batch of faces: its engine replaying with the input already on the device,
   and the whole step the detector runs for a batch's faces (each warped out of its decoded frame,
   where the frames were decoded, one inference, the vectors back on the host).
2. The detector pipeline (JPEG bytes -> serialised events through ``FrameProcessor``, as the service
   drives it) without embeddings, with every face embedded (``--embed-every-frame``) and with faces
   embedded per track (the default), on frames holding 1 to 6 faces: the sample portraits tiled into
   a grid that drifts a few pixels a frame, one frame of each of ``cameras`` cameras after another
   at ``fps``. Each repeat is one refresh period of the cameras' time (every track embedded once
   again), after a first period untimed (the tracks begun); the three processors alternate within
   each repeat, so drift of the machine hits them alike. The faces the detector found per frame and
   the share of them embedded per track are reported. People here stay in view: a scene where they
   come and go embeds each newcomer once more.
"""

import math
import statistics
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from bench import save, settings_of
from bench.engine import _model_file, _progress
from bench.figures import Target, runs_of, source
from bench.machine import describe
from bench.pipeline import _processor, full_batches, run_batches
from bench.settings import EmbeddingBenchConfig, PipelineBenchConfig
from facestream import samples
from facestream.detector_service.decoding import align
from facestream.detector_service.inference.embedder import FACES_PER_INFERENCE, Embedder
from facestream.detector_service.models import sface
from facestream.detector_service.tracks import Policy
from facestream.schemas import Frame

# One face each, found by YuNet at every tile size used here: the tiles of the multi-face frames.
TILES = samples.PORTRAITS


def tiled_frame(faces: int, width: int, height: int, first: int) -> np.ndarray:
    """A ``width`` x ``height`` BGR frame with ``faces`` one-face photos in a grid (row by row), starting
    at tile ``first``, each scaled to fit its cell."""
    rows = 1 if faces <= 3 else 2
    cols = math.ceil(faces / rows)
    cell_w, cell_h = width // cols, height // rows
    folder = samples.fetch()
    frame = np.zeros((height, width, 3), np.uint8)
    for k in range(faces):
        photo = samples.read_photo(folder / TILES[(first + k) % len(TILES)].filename)
        scale = min(cell_w / photo.shape[1], cell_h / photo.shape[0])
        tile = cv2.resize(
            photo, (int(photo.shape[1] * scale), int(photo.shape[0] * scale)), interpolation=cv2.INTER_AREA
        )
        y, x = (k // cols) * cell_h, (k % cols) * cell_w
        frame[y : y + tile.shape[0], x : x + tile.shape[1]] = tile
    return frame


def tiled_corpus(faces: int, width: int, height: int, count: int) -> list[Frame]:
    """``count`` JPEG frames (quality 85) of ``faces`` tiles each, the tiles' order turning frame by frame."""
    encoded = [
        cv2.imencode(".jpg", tiled_frame(faces, width, height, first), [cv2.IMWRITE_JPEG_QUALITY, 85])[1].tobytes()
        for first in range(len(TILES))
    ]
    return [Frame("bench", i, time.time_ns(), width, height, encoded[i % len(encoded)]) for i in range(count)]


SWAY_PX = 3  # how far the tiles drift each frame, to and fro over MOVES frames
MOVES = 12


def moving_corpus(faces: int, width: int, height: int) -> list[bytes]:
    """JPEGs (quality 85) of ``faces`` tiles, the grid moved ``SWAY_PX`` a frame right and back again: a
    camera's frames in a cycle of ``2 * MOVES`` in which its people move as people standing do."""
    still = tiled_frame(faces, width - SWAY_PX * MOVES, height, 0)
    encoded = []
    for step in range(MOVES):
        frame = np.zeros((height, width, 3), np.uint8)
        frame[:, step * SWAY_PX : step * SWAY_PX + still.shape[1]] = still
        encoded.append(cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, 85])[1].tobytes())
    return encoded + encoded[-2:0:-1]


def camera_frames(
    cycle: list[bytes], cameras: int, steps: int, first_step: int, fps: float, size: tuple[int, int]
) -> list[Frame]:
    """Frames ``first_step`` to ``first_step + steps`` of each of ``cameras`` cameras at ``fps``, a frame of
    each camera after another; camera c shows ``cycle`` c frames ahead, so they do not move as one."""
    width, height = size
    return [
        Frame(f"cam-{c}", step, round(step / fps * 1e9), width, height, cycle[(step + c) % len(cycle)])
        for step in range(first_step, first_step + steps)
        for c in range(cameras)
    ]


def run(cfg: EmbeddingBenchConfig, command: str) -> dict:
    _, path, _ = _model_file(cfg)
    base = PipelineBenchConfig(
        model=cfg.model,
        batch=cfg.batch,
        frames=cfg.batch,
        precision=cfg.precision,
        provider=cfg.provider,
        height=cfg.height,
        width=cfg.width,
        decode_threads=cfg.decode_threads,
        decode=cfg.decode,
        gpu_decoder=cfg.gpu_decoder,
        repeats=cfg.repeats,
        out=cfg.out,
    )
    plain = _processor(base, path)
    every = _processor(replace(base, embedder=cfg.embedder), path, policy=Policy(every_frame=True))
    embedding = _processor(replace(base, embedder=cfg.embedder), path, policy=cfg.policy)
    result: dict[str, Any] = {
        "benchmark": "embedding",
        "command": command,
        "machine": describe(),
        "settings": settings_of(cfg),
        "model_file": path.name,
        "provider": plain.engine.provider,
        "embedder": embedding.embedder.describe() if embedding.embedder else None,
        "decoder": {"none": plain.stats.decoder, cfg.embedder: embedding.stats.decoder},
        "embedder_alone": _embedder_alone(embedding, cfg),
        "pipeline": [],
        "complete": False,
    }
    save(result, cfg.result_file)
    processors = {"none": plain, "every_frame": every, "per_track": embedding}
    for faces in cfg.faces:
        result["pipeline"].append(_compare(processors, faces, cfg))
        save(result, cfg.result_file)
    for processor in processors.values():
        processor.close()
    result["complete"] = True
    save(result, cfg.result_file)
    _print(result)
    return result


def _embedder_alone(processor, cfg: EmbeddingBenchConfig) -> list[dict]:
    """Faces/s per bucket: the engine replaying on device-resident input, and the detector's whole step."""
    embedder: Embedder = processor.embedder
    frames = tiled_corpus(4, cfg.width, cfg.height, FACES_PER_INFERENCE)
    _, placed = processor.preprocessor.run(frames)
    images = [p.image for p in placed]
    rng = np.random.default_rng(0)
    # Faces of 60 to 200 px, turned up to 30 degrees, anywhere in their frames.
    scales, angles = rng.uniform(0.5, 1.8, FACES_PER_INFERENCE), rng.uniform(-0.5, 0.5, FACES_PER_INFERENCE)
    spots = rng.uniform(0, 1, (FACES_PER_INFERENCE, 2)) * [cfg.width - 200, cfg.height - 200]
    turns = np.stack([[[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]] for a in angles]) * scales[:, None, None]
    landmarks = np.einsum("fij,kj->fki", turns, sface.TEMPLATE) + spots[:, None, :]
    matrices = align.similarity_transforms(landmarks, sface.TEMPLATE)
    rows = []
    for bucket in embedder.engine.buckets:
        image_of = np.arange(bucket) % len(images)

        def step(count: int = bucket, faces: np.ndarray = image_of) -> None:
            embedder.embed(processor.warp(images, faces, matrices[:count], sface.SIZE))

        replay = _faces_per_s(_replay(embedder, bucket), bucket, embedder)
        rows.append({"batch": bucket, "engine_faces_per_s": replay, "step_faces_per_s": _faces_per_s(step, bucket)})
        _progress(f"embedder batch {bucket}: engine {replay:.0f} faces/s, step {rows[-1]['step_faces_per_s']:.0f}")
    return rows


def _replay(embedder: Embedder, bucket: int):
    """One inference of ``bucket`` faces with nothing copied in: a replay of its bound buffers on a GPU,
    a run on zeros on the CPU (whose session binds nothing)."""
    if embedder.engine.on_gpu:
        return lambda: embedder.engine.replay(bucket)
    zeros = np.zeros((bucket, sface.SIZE, sface.SIZE, 3), np.uint8)
    return lambda: embedder.engine.run(zeros)


def _faces_per_s(fn, faces: int, on_engine_of: Embedder | None = None, seconds: float = 0.5) -> float:
    """The median of 3 timings of ``fn`` run for about ``seconds`` each (on the engine's thread if given)."""

    def timed() -> float:
        fn()
        runs, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            fn()
            runs += 1
        return runs * faces / (time.perf_counter() - start)

    def measure() -> float:
        return statistics.median(timed() for _ in range(3))

    return round(on_engine_of.engine.thread.submit(measure).result() if on_engine_of else measure(), 1)


def _compare(processors: dict, faces: int, cfg: EmbeddingBenchConfig) -> dict:
    """Frames/s of each processor over the same frames, repeat by repeat, the cameras' time going on."""
    cycle = moving_corpus(faces, cfg.width, cfg.height)
    cameras, steps = cfg.cameras or cfg.batch, max(round(cfg.policy.refresh_s * cfg.fps), 1)

    def period(number: int) -> list[list[Frame]]:
        frames = camera_frames(cycle, cameras, steps, number * steps, cfg.fps, (cfg.width, cfg.height))
        return full_batches(frames, cfg.batch)

    for processor in processors.values():  # the first period untimed: every track begun, every face embedded
        run_batches(processor, period(0))
    tracked = processors["per_track"].stats
    made_before, carried_before = tracked.faces_embedded, tracked.faces_carried
    runs: dict[str, list[float]] = {name: [] for name in processors}
    found = 0
    for repeat in range(cfg.repeats):
        batches = period(repeat + 1)
        for name, processor in processors.items():
            frames_per_s, found = run_batches(processor, batches)
            runs[name].append(round(frames_per_s, 1))
        _progress(
            f"{faces} face(s)/frame, repeat {repeat + 1}: " + ", ".join(f"{k} {v[-1]:.0f}" for k, v in runs.items())
        )
    made, carried = tracked.faces_embedded - made_before, tracked.faces_carried - carried_before
    medians = {name: statistics.median(values) for name, values in runs.items()}
    return {
        "faces_per_frame": faces,
        "faces_found_per_frame": round(found / sum(len(b) for b in batches), 2),
        "frames_per_s": medians,
        "ratio": {name: round(medians[name] / medians["none"], 4) for name in ("every_frame", "per_track")},
        "embedded_share": round(made / max(made + carried, 1), 4),
        "drop_fraction": round(1 - medians["every_frame"] / medians["none"], 4),
        "runs": runs,
    }


def _print(result: dict) -> None:
    print(f"embedder alone ({result['embedder']}):")
    for row in result["embedder_alone"]:
        print(
            f"  batch {row['batch']:>3}: engine {row['engine_faces_per_s']:>9.0f} faces/s, "
            f"whole step {row['step_faces_per_s']:>9.0f}"
        )
    print("pipeline frames/s without embeddings, with every face embedded, with faces embedded per track:")
    for row in result["pipeline"]:
        fps, ratio = row["frames_per_s"], row["ratio"]
        print(
            f"  {row['faces_per_frame']} face(s)/frame ({row['faces_found_per_frame']} found): none {fps['none']:.0f}, "
            f"every frame {fps['every_frame']:.0f} ({ratio['every_frame']:.2f}x), per track {fps['per_track']:.0f} "
            f"({ratio['per_track']:.2f}x, {100 * row['embedded_share']:.1f}% of faces embedded)"
        )
    print(f"results: {result['settings']['out']}")


def _row(r: dict) -> str:
    """One pipeline row in words: frames/s of each processor (a result of before tracks has two)."""
    found = f"{r['faces_per_frame']} face(s) ({r['faces_found_per_frame']:g} found): "
    if "ratio" not in r:
        return (
            found
            + ", ".join(f"{n} {v:.0f}" for n, v in r["frames_per_s"].items())
            + (f", **{100 * r['drop_fraction']:.1f}% fewer**")
        )
    fps, ratio = r["frames_per_s"], r["ratio"]
    return found + (
        f"none {fps['none']:.0f}, every face embedded {fps['every_frame']:.0f} ({ratio['every_frame']:.2f}x), "
        f"per track **{fps['per_track']:.0f} ({ratio['per_track']:.2f}x)**, "
        f"{100 * r['embedded_share']:.1f}% of faces embedded"
    )


def render(result: dict) -> list[str]:
    s, m = result["settings"], result["machine"]
    alone = "; ".join(
        f"{r['batch']}: {r['engine_faces_per_s']:.0f} / {r['step_faces_per_s']:.0f}" for r in result["embedder_alone"]
    )
    rows = "; ".join(_row(r) for r in result["pipeline"])
    tracked = "ratio" in (result["pipeline"] or [{}])[0]
    how = (
        f"without embeddings, with every face embedded and with faces embedded per track (refresh "
        f"{s['embed_refresh_s']:g} s, better by {s['embed_better_by']:g}), the three alternating in each of "
        f"{s['repeats']} repeats of one refresh period (medians), on {s['cameras'] or s['batch']} cameras at "
        f"{s['fps']:g} fps whose frames hold the sample portraits tiled 1 to 6 to a frame, drifting a few pixels "
        f"a frame"
        if tracked
        else f"without and with embeddings, the two alternating in each of {s['repeats']} repeats (medians), on "
        f"frames of the sample portraits tiled 1 to 6 to a frame"
    )
    return [
        f"**Embeddings, {result['embedder']}, {s['model']} {s['precision'].upper()} batch {s['batch']}, one detector "
        f"process, {m.get('gpu', 'no GPU')}** (`{result['command']}`). The embedder alone, faces/s by batch "
        f"(engine replaying on device input / the detector's whole step: faces warped out of the decoded frames, "
        f"one inference, vectors to the host): {alone}. The detector pipeline (JPEG bytes -> serialised events), "
        f"frames/s {how}: {rows}. {source(result)}"
    ]


def targets(results: dict[str, dict]) -> list[Target]:
    """YuNet's frames/s with SFace identity against without, at 1, 2 and 4 faces a frame."""
    runs = [
        r
        for r in runs_of(results, "embedding", embedder="sface", precision="fp16", provider="cuda")
        if "yunet" in Path(r["settings"]["model"]).name  # the name, or the FP16 file made on the GPU machine
    ]
    if not runs:
        return []
    # The detector as it runs now (faces embedded per track) where measured; before, every face.
    run = next((r for r in runs if "ratio" in r["pipeline"][0]), runs[0])
    rows = [r for r in run["pipeline"] if r["faces_per_frame"] <= 4]
    ratios = [r["ratio"]["per_track"] if "ratio" in r else 1 - r["drop_fraction"] for r in rows]
    return [
        Target(
            "YuNet + SFace: identity at >= 0.85x the frames/s, 1-4 faces a frame",
            ", ".join(f"{ratio:.2f}x at {r['faces_per_frame']}" for ratio, r in zip(ratios, rows))
            + " face(s) per frame (one detector process"
            + (", faces embedded per track)" if "ratio" in rows[0] else ", every face embedded)"),
            min(ratios) >= 0.85,
            run["_file"],
            f"{min(ratios):.2f}-{max(ratios):.2f}x",
        )
    ]
