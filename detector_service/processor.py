"""Frames -> detection events: the model-facing half of the detector, with nothing about Kafka.

Three stages run at once on consecutive batches: JPEG decoding and letterboxing (nvImageCodec and a
CUDA kernel when the engine runs on a GPU, else a thread pool), inference (one thread, so a GPU sees
one batch at a time), and turning outputs into boxes plus event building (the caller's thread). ``begin`` hands a
batch to the first two and returns at once; ``finish`` waits for its inference, then turns outputs into boxes
back to frame pixels, embeds the faces (with an embedder: cut from the full-size frames where they
were decoded, host or device) and builds one event per frame.
The service calls ``begin`` for batch N+1 before ``finish`` for batch N, so batch N+1 decodes and
infers while batch N is turned into events and while the consumer polls; OpenCV and ONNX Runtime
release the GIL. Callers never have more than ``batches_under_way`` batches begun and not finished
(the GPU decoder reuses a batch's frames that many batches later): two, or three with an embedder,
whose stage of its own would otherwise always wait on one of the others. ``bench pipeline`` drives the
same two calls without Kafka.
"""

import logging
import time
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from facestream.detector_service.decoding import align, preprocess_gpu
from facestream.detector_service.decoding.align_gpu import GpuWarper
from facestream.detector_service.decoding.gpu_decode_settings import DEFAULT_FALLBACKS, GpuDecodeSettings
from facestream.detector_service.decoding.placements import DecodeError, Placements
from facestream.detector_service.decoding.preprocess import Preprocessor
from facestream.detector_service.decoding.sharpness import array_module, sharpness
from facestream.detector_service.events import Identity, build_events, build_pose_events
from facestream.detector_service.inference.embedder import Embedder, Warp
from facestream.detector_service.inference.engine import InferenceEngine
from facestream.detector_service.models.base import Detections, FaceModel, Thresholds
from facestream.detector_service.models.postprocess import to_frames
from facestream.detector_service.stats import Stats
from facestream.detector_service.tracks import CameraKeys, Policy, Sources, Tracks
from facestream.errors import ConfigError
from facestream.face_quality import qualities
from facestream.schemas import DetectionEvent, Frame, ModelRef, PoseEvent

log = logging.getLogger(__name__)


@dataclass
class Pending:
    """A batch under way; ``tags`` are the caller's handles, one per frame."""

    frames: Sequence[Frame]
    tags: list
    future: Future  # of _Found with an embedder (a stage of its own), else of _Inferred


@dataclass(frozen=True)
class _Inferred:
    placed: Placements  # every frame of the batch
    good: list[int]  # frames that decoded, in batch order
    outputs: dict[str, np.ndarray] | None
    decode_s: float  # the decoding thread's time on this batch
    decode_wait_s: float  # inference thread idle, waiting for decoding
    infer_s: float


@dataclass(frozen=True)
class _Found:
    """A batch's faces in frame pixels and, with an embedder, their embeddings."""

    inferred: _Inferred
    faces: Detections | None  # None when no frame of the batch decoded
    counts: np.ndarray  # faces per decoded frame
    identity: Identity | None  # with an embedder: the faces' embeddings (where made), tracks, sharpness
    boxes_s: float
    embed_s: float


@dataclass(frozen=True)
class Outcome:
    tag: Any  # the caller's handle for the frame, as it was given
    event: DetectionEvent | PoseEvent | None = None
    error: DecodeError | None = None


@dataclass(frozen=True)
class Candidates:
    """A batch's network outputs before they are boxes: what a GPU owner without an embedder sends, so
    that each front turns its own frames into boxes in its own interpreter rather than the owner's."""

    outputs: dict[str, np.ndarray]  # by output name, one row per good frame
    placed: Placements  # where each good frame landed in the batch


@dataclass(frozen=True)
class Answer:
    """A batch's outcome as arrays, before any event exists: what a GPU owner hands back to the front
    that sent the batch (small and picklable), and what ``outcomes`` turns into events."""

    errors: dict[int, str]  # frame index -> why it did not decode
    good: list[int]  # frames that decoded, in batch order
    faces: Detections | None  # every good frame's faces (or people) in frame pixels; None if none decoded
    counts: np.ndarray  # faces per good frame
    identity: Identity | None  # with an embedder: the faces' embeddings (where made), tracks, sharpness
    seconds: dict[str, float]  # stage -> time this batch spent there (Stats' *_s names)
    candidates: Candidates | None = None  # set instead of faces and counts until ``Boxes.resolve``

    @property
    def embedded(self) -> np.ndarray | None:
        """With an embedder, which faces carry their own embedding (the others their track's)."""
        return None if self.identity is None else self.identity.embedded


@dataclass(frozen=True)
class Boxes:
    """Network outputs -> faces (or people) in frame pixels: the model's decoding and NMS, then each
    letterbox undone. Small and picklable: a GPU owner hands it to its fronts when they draw the boxes."""

    model: FaceModel
    input_hw: tuple[int, int]
    thresholds: Thresholds

    def find(self, outputs: dict[str, np.ndarray], placed: Placements) -> tuple[Detections, np.ndarray]:
        """Every frame's faces, concatenated in frame order, and how many each has."""
        return to_frames(self.model.to_detections(outputs, self.input_hw, self.thresholds), placed.scale, placed.sizes)

    def resolve(self, answer: Answer) -> Answer:
        """``answer`` with its candidates turned into faces, the time it took counted as post-processing."""
        if answer.candidates is None:
            return answer
        t0 = time.perf_counter()
        faces, counts = self.find(answer.candidates.outputs, answer.candidates.placed)
        seconds = {**answer.seconds, "postprocess_s": time.perf_counter() - t0}
        return Answer(answer.errors, answer.good, faces, counts, None, seconds)


@dataclass(frozen=True)
class Describes:
    """What a front needs to know of the processor that answers it: its one-line description, the
    model and embedder its events name, and what the model finds."""

    line: str
    model: ModelRef
    finds: str  # "faces" or "people"
    embedder: ModelRef | None


def outcomes(answer: Answer, frames: Sequence[Frame], tags: list, describes: Describes) -> list[Outcome]:
    """One outcome per frame of the batch: a dead letter for each frame that did not decode, an event
    (built from the answer's arrays, a batch at once) for the others."""
    found = [Outcome(tags[i], error=DecodeError(why)) for i, why in answer.errors.items()]
    if answer.faces is None:
        return found
    good = [frames[i] for i in answer.good]
    events: Sequence[DetectionEvent | PoseEvent] = (
        build_pose_events(good, answer.faces, answer.counts, describes.model)
        if describes.finds == "people"
        else build_events(
            good,
            answer.faces,
            answer.counts,
            describes.model,
            describes.embedder,
            answer.identity or Identity(),
        )
    )
    return found + [Outcome(tags[i], event=event) for i, event in zip(answer.good, events)]


class FrameProcessor:
    def __init__(
        self,
        engine: InferenceEngine,
        model: FaceModel,
        thresholds: Thresholds,
        decode_threads: int,
        stats: Stats,
        decode: str = "auto",
        gpu_decoder: GpuDecodeSettings | None = None,
        embedder: Embedder | None = None,
        policy: Policy | None = None,
    ) -> None:
        self.engine = engine
        self.model = model
        self.thresholds = thresholds
        self.stats = stats
        self.embedder = embedder
        # With an embedder, faces are followed per camera and embedded when their track needs it.
        self.tracks = None if embedder is None else Tracks(policy or Policy())
        self._camera_keys = CameraKeys()
        # One batch per stage: decoding, inference and, with an embedder, embedding (a GPU owner keeps
        # this many under way; the service two, the next begun while the last is turned into events).
        self.batches_under_way = 2 if embedder is None else 3
        self.boxes = Boxes(model, engine.input_hw, thresholds)
        self.preprocessor = self._preprocessor(decode, decode_threads, gpu_decoder)
        # One batch per stage at a time: batch N+1 decodes while batch N infers (on the engine's thread).
        self._decoding = ThreadPoolExecutor(max_workers=1, thread_name_prefix="decode-batch")
        self._describes = self.describes()

    def _preprocessor(self, decode: str, threads: int, gpu_decoder: GpuDecodeSettings | None):
        """GPU decoding when the engine is on a GPU and nvImageCodec is here; a loud CPU fallback otherwise.
        With an embedder, the full-size frames stay where they were decoded and faces are cut there."""
        keep = self.embedder is not None
        self.warp: Warp = align.warp
        if decode == "cpu" or (decode == "auto" and not self.engine.on_gpu):
            self.stats.decoder = "cpu"
            return Preprocessor(self.engine.input_hw, threads, keep_frames=keep)
        missing = preprocess_gpu.available() if self.engine.on_gpu else "inference does not run on a GPU"
        if missing is None and self.embedder is not None and not self.embedder.engine.on_gpu:
            missing = "the embedder does not run on the GPU, so faces are cut on the host from host frames"
        if missing is None:
            self.stats.decoder = "gpu"
            if keep:
                self.warp = GpuWarper()
            return self._gpu_preprocessor(gpu_decoder or GpuDecodeSettings(), keep)
        if decode == "gpu":
            raise ConfigError(f"GPU decoding was asked for but cannot run: {missing}")
        log.warning("FALLBACK: JPEG decoding runs on %d CPU threads, not on the GPU: %s", threads, missing)
        self.stats.decoder, self.stats.decode_fallback = "cpu", True
        return Preprocessor(self.engine.input_hw, threads, keep_frames=keep)

    def _gpu_preprocessor(self, settings: GpuDecodeSettings, keep_frames: bool):
        """nvImageCodec as configured; if the default set-up cannot start here (no C compiler for the
        native decoder, a GPU that refuses the hardware decoder), the next of DEFAULT_FALLBACKS that can,
        with a warning each time. A set-up given by name never falls back."""
        fallbacks = (
            [GpuDecodeSettings.parse(text) for text in DEFAULT_FALLBACKS] if settings == GpuDecodeSettings() else []
        )
        while True:
            try:
                return preprocess_gpu.GpuPreprocessor(
                    self.engine.input_hw,
                    settings=settings,
                    keep_frames=keep_frames,
                    batches_under_way=self.batches_under_way,
                )
            except ConfigError as exc:
                if not fallbacks:
                    raise
                settings = fallbacks.pop(0)
                log.warning("FALLBACK: %s; decoding with nvImageCodec set up as %s instead", exc, settings)
                self.stats.decode_fallback = True

    def describe(self) -> str:
        ref, (height, width) = self.model.ref, self.engine.input_hw
        embeds = f"; embeddings {self.embedder.describe()}" if self.embedder is not None else ""
        return f"{ref.name} v{ref.version} on {self.engine.provider}, input {width}x{height}{embeds}"

    def begin(self, frames: Sequence[Frame], tags: list, sources: Sources | None = None) -> Pending:
        """Start a batch; ``sources`` says which camera each frame is from, its number and capture time
        where ``frames`` do not (a GPU owner's), for following faces."""
        decoding = self._decoding.submit(self._decode, frames)
        inferring = self.engine.thread.submit(self._infer, decoding)
        if self.embedder is None:
            return Pending(frames, tags, inferring)
        if sources is None:
            sources = self._camera_keys.sources(list(frames))
        # Boxes and embeddings of batch N on the embedder's thread, while the caller builds batch N-1's
        # events; one thread, so the tracks follow the batches in order.
        return Pending(frames, tags, self.embedder.engine.thread.submit(self._find, inferring, sources))

    def _decode(self, frames: Sequence[Frame]):
        t0 = time.perf_counter()
        batch, placed = self.preprocessor.run(frames)
        return batch, placed, time.perf_counter() - t0

    def _infer(self, decoding: Future) -> _Inferred:
        t0 = time.perf_counter()
        batch, placed, decode_s = decoding.result()
        good = placed.good.tolist()
        t1 = time.perf_counter()
        images = batch[good] if len(good) < len(placed) else batch
        outputs = self.engine.run(images, floor=self.thresholds.score_threshold) if good else None
        return _Inferred(placed, good, outputs, decode_s, t1 - t0, time.perf_counter() - t1)

    def _find(self, inferring: Future, sources: Sources | None = None) -> _Found:
        """Boxes back in frame pixels, then each face cut from its full-size frame, followed on its camera,
        and embedded where its track needs it."""
        inferred: _Inferred = inferring.result()
        if inferred.outputs is None:
            return _Found(inferred, None, np.zeros(0, np.int64), None, 0.0, 0.0)
        t0 = time.perf_counter()
        decoded = inferred.placed.decoded()
        faces, counts = self.boxes.find(inferred.outputs, decoded)
        t1 = time.perf_counter()
        if self.embedder is None or self.tracks is None or sources is None:
            return _Found(inferred, faces, counts, None, t1 - t0, 0.0)
        image_of = np.repeat(np.arange(len(decoded)), counts)
        assert decoded.images is not None, "an embedder's decoder keeps the frames"
        crops = self.embedder.crops(decoded.images, faces, image_of, self.warp)
        sharp = sharpness(crops)
        quality = qualities(faces.boxes, faces.scores, faces.landmarks, sharp)
        tracks, embedded = self.tracks.follow(sources.take(inferred.good), faces.boxes, quality, image_of)
        chosen = crops if embedded.all() else crops[array_module(crops).asarray(np.flatnonzero(embedded))]
        embeddings = self.embedder.embed(chosen)
        identity = Identity(embeddings, embedded, tracks, sharp)
        return _Found(inferred, faces, counts, identity, t1 - t0, time.perf_counter() - t1)

    def describes(self) -> Describes:
        embedder = None if self.embedder is None else self.embedder.ref
        return Describes(self.describe(), self.model.ref, self.model.finds, embedder)

    def answer(self, pending: Pending, boxes_here: bool = True) -> Answer:
        """Batch ``pending`` as arrays, once its decoding, inference and embedding are done. Without an
        embedder, ``boxes_here=False`` leaves the network's candidates for ``Boxes.resolve`` to turn into
        boxes where the events are built (a GPU owner's fronts); an embedder needs the boxes here."""
        if self.embedder is None and not boxes_here:
            inferred: _Inferred = pending.future.result()
            candidates = None
            if inferred.outputs is not None:  # without an embedder no frame keeps its image: small to send
                candidates = Candidates(inferred.outputs, inferred.placed.decoded())
            found = _Found(inferred, None, np.zeros(0, np.int64), None, 0.0, 0.0)
        else:
            found = pending.future.result() if self.embedder is not None else self._find(pending.future)
            inferred, candidates = found.inferred, None
        errors = dict(inferred.placed.errors)
        seconds = {
            "decode_s": inferred.decode_s,
            "decode_wait_s": inferred.decode_wait_s,  # decoding that the pipeline did not hide
            "infer_s": inferred.infer_s,
            "embed_s": found.embed_s,
            "postprocess_s": found.boxes_s,
        }
        return Answer(errors, inferred.good, found.faces, found.counts, found.identity, seconds, candidates)

    def finish(self, pending: Pending) -> list[Outcome]:
        answer = self.answer(pending)
        t0 = time.perf_counter()
        done = outcomes(answer, pending.frames, pending.tags, self._describes)
        self.stats.add_batch(
            len(pending.frames), answer.seconds, events_s=time.perf_counter() - t0, embedded=answer.embedded
        )
        return done

    def warm_up(self) -> float:
        """One decode on the decoding thread and one inference per batch bucket: the first real batch
        must not pay for starting the JPEG decoder (about a second for nvImageCodec's), cuDNN's
        algorithm search, a TensorRT build or a CUDA graph capture. A decoder that cannot decode a plain
        JPEG (e.g. nvImageCodec without its JPEG extension) stops the start here, with a ConfigError,
        rather than dead-lettering every frame. Returns the seconds it took."""
        t0 = time.perf_counter()
        # A full batch, so the GPU decoder's kept Images exist for every slot before the first real one.
        _, placed = self._decoding.submit(self.preprocessor.run, self._blank(self.engine.batch)).result()
        failed = next(iter(placed.errors.values()), None)
        if failed is not None:
            raise ConfigError(f"the JPEG decoder ({self.stats.decoder}) cannot decode a plain JPEG at start: {failed}")
        for engine in self._engines():
            # With the detector's floor as batches will have it (on a GPU, CuPy compiles the kernels
            # that pick the candidates to copy on their first use: seconds, on a fresh machine).
            floor = self.thresholds.score_threshold if engine is self.engine else None
            # A CPU session takes any batch and has nothing to build per size: each engine runs once at
            # the detector's batch, so that its memory arena already has the size batches need (a
            # replica's memory at start is what it keeps), not at the embedder's full bucket (256
            # faces: seconds of a CPU detector's start).
            for size in engine.buckets if engine.on_gpu else (min(engine.buckets[-1], self.engine.batch),):
                engine.run(np.zeros((size, *engine.input_hw, 3), dtype=np.uint8), floor=floor)
        return time.perf_counter() - t0

    def keep_warm(self) -> None:
        """For a GPU owner with no batch under way: one small decode and every bucket run once on what
        its buffers hold, so that the first batch after a quiet spell does not meet a GPU that has
        lowered its clocks and a decoder gone cold. A CPU keeps nothing warm: it does nothing there."""
        if not self.engine.on_gpu:
            return
        self._decoding.submit(self.preprocessor.run, self._blank(1)).result()
        for engine in self._engines():
            for bucket in engine.buckets:
                engine.replay(bucket)

    def _blank(self, count: int) -> list[Frame]:
        height, width = self.engine.input_hw
        blank = cv2.imencode(".jpg", np.full((height, width, 3), 128, dtype=np.uint8))[1].tobytes()
        return [Frame("warm-up", i, 0, width, height, blank) for i in range(count)]

    def _engines(self) -> tuple[InferenceEngine, ...]:
        return (self.engine, *(() if self.embedder is None else (self.embedder.engine,)))

    def close(self) -> None:
        self._decoding.shutdown(wait=True)
        self.engine.close()
        if self.embedder is not None:
            self.embedder.close()
        self.preprocessor.close()
