"""Frames -> detection events: the model-facing half of the detector, with nothing about Kafka.

``begin`` starts decoding and letterboxing a batch in background threads and returns at once;
``finish`` waits for that, runs the engine, decodes boxes back to frame pixels and builds one
event per frame. The service calls ``begin`` for batch N+1 before ``finish`` for batch N, so JPEG
decoding overlaps inference (OpenCV and ONNX Runtime both release the GIL). ``bench pipeline``
drives the same two calls without Kafka.
"""

import time
from concurrent.futures import Future
from dataclasses import dataclass

import numpy as np

from detector_service.engine import Engine
from detector_service.events import build_event
from detector_service.models.base import DecodeOptions, FaceModel
from detector_service.postprocess import to_frame
from detector_service.preprocess import DecodeError, Placed, Preprocessor
from detector_service.stats import Stats
from schemas import DetectionEvent, Frame


@dataclass
class Pending:
    """A batch whose decoding is under way; ``tags`` are the caller's handles, one per frame."""

    frames: list[Frame]
    tags: list
    future: Future


@dataclass(frozen=True)
class Outcome:
    tag: object
    event: DetectionEvent | None = None
    error: DecodeError | None = None


class FrameProcessor:
    def __init__(
        self, engine: Engine, model: FaceModel, options: DecodeOptions, decode_threads: int, stats: Stats
    ) -> None:
        self.engine = engine
        self.model = model
        self.options = options
        self.stats = stats
        self.preprocessor = Preprocessor(engine.input_hw, decode_threads)

    def describe(self) -> str:
        ref, (height, width) = self.model.ref, self.engine.input_hw
        return f"{ref.name} v{ref.version} on {self.engine.provider}, input {width}x{height}"

    def begin(self, frames: list[Frame], tags: list) -> Pending:
        return Pending(frames, tags, self.preprocessor.submit(frames))

    def finish(self, pending: Pending) -> list[Outcome]:
        t0 = time.perf_counter()
        batch, placed = pending.future.result()
        good = [i for i, p in enumerate(placed) if isinstance(p, Placed)]
        outcomes = [Outcome(pending.tags[i], error=p) for i, p in enumerate(placed) if isinstance(p, DecodeError)]
        t1 = time.perf_counter()
        if good:
            outputs = self.engine.run(batch[good] if len(good) < len(placed) else batch)
            t2 = time.perf_counter()
            detections = self.model.decode(outputs, self.engine.input_hw, self.options)
            for det, i in zip(detections, good):
                p = placed[i]
                event = build_event(pending.frames[i], to_frame(det, p.scale, p.width, p.height), self.model.ref)
                outcomes.append(Outcome(pending.tags[i], event=event))
            self.stats.infer_s += t2 - t1
            self.stats.postprocess_s += time.perf_counter() - t2
        self.stats.batches += 1
        self.stats.preprocess_s += t1 - t0  # waiting for decoding: what overlapping did not hide
        return outcomes

    def warm_up(self) -> float:
        """One inference per batch bucket: the first real batch of each size must not pay for cuDNN's
        algorithm search, a TensorRT build or a CUDA graph capture. Returns the seconds it took."""
        t0 = time.perf_counter()
        for bucket in self.engine.buckets:
            self.engine.run(np.zeros((bucket, *self.engine.input_hw, 3), dtype=np.uint8))
        return time.perf_counter() - t0

    def close(self) -> None:
        self.preprocessor.close()
