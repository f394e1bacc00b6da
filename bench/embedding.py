"""Embedding benchmark: what identity embeddings cost the detector, measured side by side in one run.

1. The embedder alone, per batch of faces: its engine replaying with the input already on the device,
   and the whole step the detector runs for a batch's faces (each warped out of its decoded frame,
   where the frames were decoded, one inference, the vectors back on the host).
2. The detector pipeline (JPEG bytes -> serialised events through ``FrameProcessor``, as the service
   drives it) with the embedder against without, on frames holding 1 to 6 faces: the sample
   portraits tiled into a grid. The two processors alternate within each repeat, so drift of the
   machine hits both alike; the faces the detector actually found per frame are reported.
"""

import math
import statistics
import time
from dataclasses import replace
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


def run(cfg: EmbeddingBenchConfig, command: str) -> dict:
    _, path, _ = _model_file(cfg)
    base = PipelineBenchConfig(
        model=cfg.model,
        batch=cfg.batch,
        frames=cfg.frames,
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
    plain, embedding = _processor(base, path), _processor(replace(base, embedder=cfg.embedder), path)
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
    for faces in cfg.faces:
        result["pipeline"].append(_compare(plain, embedding, faces, cfg))
        save(result, cfg.result_file)
    plain.close()
    embedding.close()
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


def _compare(plain, embedding, faces: int, cfg: EmbeddingBenchConfig) -> dict:
    batches = full_batches(tiled_corpus(faces, cfg.width, cfg.height, cfg.frames), cfg.batch)
    runs: dict[str, list[float]] = {"none": [], cfg.embedder: []}
    found = 0
    for repeat in range(cfg.repeats):
        for name, processor in (("none", plain), (cfg.embedder, embedding)):
            frames_per_s, found = run_batches(processor, batches)
            runs[name].append(round(frames_per_s, 1))
        _progress(
            f"{faces} face(s)/frame, repeat {repeat + 1}: " + ", ".join(f"{k} {v[-1]:.0f}" for k, v in runs.items())
        )
    without, with_ = statistics.median(runs["none"]), statistics.median(runs[cfg.embedder])
    return {
        "faces_per_frame": faces,
        "faces_found_per_frame": round(found / sum(len(b) for b in batches), 2),
        "frames_per_s": {"none": without, cfg.embedder: with_},
        "drop_fraction": round(1 - with_ / without, 4),
        "runs": runs,
    }


def _print(result: dict) -> None:
    print(f"embedder alone ({result['embedder']}):")
    for row in result["embedder_alone"]:
        print(
            f"  batch {row['batch']:>3}: engine {row['engine_faces_per_s']:>9.0f} faces/s, "
            f"whole step {row['step_faces_per_s']:>9.0f}"
        )
    print("pipeline frames/s, without and with embeddings:")
    for row in result["pipeline"]:
        (plain, without), (name, with_) = row["frames_per_s"].items()
        print(
            f"  {row['faces_per_frame']} face(s)/frame ({row['faces_found_per_frame']} found): {plain} {without:.0f}, "
            f"{name} {with_:.0f}, drop {100 * row['drop_fraction']:.1f}%"
        )
    print(f"results: {result['settings']['out']}")


def render(result: dict) -> list[str]:
    s, m = result["settings"], result["machine"]
    alone = "; ".join(
        f"{r['batch']}: {r['engine_faces_per_s']:.0f} / {r['step_faces_per_s']:.0f}" for r in result["embedder_alone"]
    )
    rows = "; ".join(
        f"{r['faces_per_frame']} face(s) ({r['faces_found_per_frame']:g} found): "
        + ", ".join(f"{name} {fps:.0f}" for name, fps in r["frames_per_s"].items())
        + f", **{100 * r['drop_fraction']:.1f}% fewer**"
        for r in result["pipeline"]
    )
    return [
        f"**Embeddings, {result['embedder']}, {s['model']} {s['precision'].upper()} batch {s['batch']}, one detector "
        f"process, {m.get('gpu', 'no GPU')}** (`{result['command']}`). The embedder alone, faces/s by batch "
        f"(engine replaying on device input / the detector's whole step: faces warped out of the decoded frames, "
        f"one inference, vectors to the host): {alone}. The detector pipeline (JPEG bytes -> serialised events), "
        f"frames/s without and with embeddings, the two alternating in each of {s['repeats']} repeats (medians), "
        f"on frames of the sample portraits tiled 1 to 6 to a frame: {rows}. {source(result)}"
    ]


def targets(results: dict[str, dict]) -> list[Target]:
    """YuNet's frames/s with SFace embeddings against without, at 1-4 faces a frame."""
    runs = runs_of(results, "embedding", model="yunet", embedder="sface", precision="fp16", provider="cuda")
    if not runs:
        return []
    run = runs[0]
    drops = [r["drop_fraction"] for r in run["pipeline"]]
    return [
        Target(
            "YuNet + SFace pipeline: <= 15% fewer frames/s at 1-4 faces a frame",
            ", ".join(f"{100 * r['drop_fraction']:.0f}% at {r['faces_per_frame']}" for r in run["pipeline"])
            + " face(s) per frame (one detector process)",
            max(drops) <= 0.15,
            run["_file"],
            f"{100 * min(drops):.0f}-{100 * max(drops):.0f}% fewer",
        )
    ]
