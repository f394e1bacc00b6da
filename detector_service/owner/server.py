"""The GPU owner: one process per GPU holds its CUDA context, the JPEG decoder, the engine sessions and
the embedder, and answers the batches of every front with arrays.

Separate replicas each had a context of their own, and kernels of different processes only take turns
on a GPU (no MPS), so one replica's decoding could not overlap another's inference; and a decoding
thread that shares its interpreter with Kafka clients and event building waits for it once per image.
Here the owner's Python does little more than hand batches on: decoding of batch N+1 overlaps the
inference of batch N on streams of one context, and the fronts, each a process with its own
interpreter, do the Kafka side and build the events.

Batches that wait for the owner are merged, in arrival order, into runs of up to the engine's batch
(``--owner-batch``): fronts that poll small batches still fill the engine's largest bucket, and the
owner pays its per-batch work once for all of them; each front gets back the answer to its own part.

Without an embedder the owner answers with the network's candidates and each front turns its own into
boxes (``processor.Boxes``, sent once in ``Started``); an embedder needs the boxes in the owner, to cut
the faces out of the frames it decoded.

The conversation with a front, over its pipe: the owner says ``Started`` (or ``Failed``) once its
processor is warm; the front sends ``payloads.Batch`` descriptors and finally ``None``; the owner
answers each batch, in order, with ``Answered``. If anything fails, every front gets ``Failed``.
"""

import logging
import queue
import signal
import threading
from collections import deque
from dataclasses import dataclass
from multiprocessing.connection import Connection

from facestream import logs
from facestream.detector_service.decoding.packed import PackedFrames
from facestream.detector_service.owner.merging import split
from facestream.detector_service.owner.payloads import Batch, Reader
from facestream.detector_service.processor import Answer, Boxes, Describes, FrameProcessor, Pending
from facestream.detector_service.tracks import Sources
from facestream.errors import FacestreamError

log = logging.getLogger(__name__)

IDLE_S = 1.0  # with nothing under way for this long, the owner keeps the decoder and engine warm


@dataclass(frozen=True)
class Started:
    describes: Describes
    boxes: Boxes  # how a front turns the candidates of an answer into boxes (with no embedder, it does)
    provider: str  # the Stats a front reports, as the owner's processor set them
    fallback: bool
    warning: str | None
    decoder: str
    decode_fallback: bool


@dataclass(frozen=True)
class Answered:
    number: int
    answer: Answer


@dataclass(frozen=True)
class Failed:
    message: str
    exit_code: int


def serve(build, connections: list[Connection]) -> None:
    """Run an owner until every front has said it is done: ``build()`` makes the warm processor (in
    this process, so the CUDA context is this one's). Signals are the fronts' to act on: the owner
    ends when the last of them says goodbye (or its pipe closes), after answering what it sent."""
    logs.setup()
    for stop in (signal.SIGINT, signal.SIGTERM):
        signal.signal(stop, signal.SIG_IGN)
    try:
        processor: FrameProcessor = build()
    except Exception as exc:  # sent to every front, which stops with it
        _fail(connections, exc)
        raise
    stats = processor.stats
    started = Started(
        processor.describes(),
        processor.boxes,
        stats.provider,
        stats.fallback,
        stats.warning,
        stats.decoder,
        stats.decode_fallback,
    )
    for connection in connections:
        connection.send(started)
    log.info("GPU owner serving %d fronts: %s", len(connections), processor.describe())
    try:
        _Owner(processor, connections).run()
    except Exception as exc:
        _fail(connections, exc)
        raise
    finally:
        processor.close()


def _fail(connections: list[Connection], exc: Exception) -> None:
    failed = Failed(f"{type(exc).__name__}: {exc}", exc.exit_code if isinstance(exc, FacestreamError) else 1)
    for connection in connections:
        try:
            connection.send(failed)
        except OSError:  # that front is gone already
            pass


Part = tuple[int, Batch]  # (front, its batch)


class _Owner:
    """Batches from every front in arrival order, merged up to the engine's batch, one run under way
    per stage of the processor (decoding, inference and any embedding), each part answered to its front
    as soon as its run is done. One queue wakes the loop: batches arriving and runs finishing; a second
    with neither keeps the GPU warm."""

    def __init__(self, processor: FrameProcessor, connections: list[Connection]) -> None:
        self.processor = processor
        self.connections = connections
        self.reader = Reader()
        self.capacity = processor.engine.batch  # frames one run may take: the engine's largest bucket
        self.wake: queue.SimpleQueue = queue.SimpleQueue()  # (front, Batch or None when it is done), or None
        self._slots: dict[tuple[int, int], str] = {}  # (front, slot) -> the block it lies in
        for front, connection in enumerate(connections):
            threading.Thread(target=self._receive, args=(front, connection), name=f"front-{front}", daemon=True).start()

    def _receive(self, front: int, connection: Connection) -> None:
        while True:
            try:
                batch = connection.recv()
            except (EOFError, OSError):  # the front died: nothing more comes from it
                batch = None
            self.wake.put((front, batch))
            if batch is None:
                return

    def run(self) -> None:
        waiting: deque[Part] = deque()
        under_way: deque[tuple[list[Part], Pending]] = deque()  # (the batches of a run, pending), oldest first
        serving = set(range(len(self.connections)))
        closing: set[int] = set()  # fronts that said goodbye, owed their last answers
        while serving or closing:
            try:
                arrival = self.wake.get(timeout=IDLE_S)
            except queue.Empty:  # nothing arrived and nothing finished: idle
                if not waiting and not under_way:
                    self.processor.keep_warm()
                continue
            if arrival is not None:
                front, batch = arrival
                if batch is None:
                    serving.discard(front)
                    closing.add(front)
                else:
                    waiting.append((front, batch))
            while under_way and under_way[0][1].future.done():
                parts, pending = under_way.popleft()
                # The fronts turn candidates into boxes, each in its own interpreter: the owner's is
                # shared by its decoding, inference and answering threads, and decoding needs it per image.
                answer = self.processor.answer(pending, boxes_here=False)
                answers = [answer] if len(parts) == 1 else split(answer, [len(batch) for _, batch in parts])
                for (front, batch), part in zip(parts, answers, strict=True):
                    self._send(front, Answered(batch.number, part))
            while waiting and len(under_way) < self.processor.batches_under_way:  # one per stage
                parts = [waiting.popleft()]
                frames = len(parts[0][1])
                while waiting and frames + len(waiting[0][1]) <= self.capacity:
                    frames += len(waiting[0][1])
                    parts.append(waiting.popleft())
                pending = self._begin(parts)
                pending.future.add_done_callback(lambda _: self.wake.put(None))
                under_way.append((parts, pending))
            owed = {front for front, _ in waiting} | {front for parts, _ in under_way for front, _ in parts}
            for front in closing - owed:  # every batch it sent is answered: goodbye
                self._send(front, None)
                closing.discard(front)
        self.reader.close()

    def _begin(self, parts: list[Part]) -> Pending:
        packed = []
        for front, batch in parts:
            slot = (front, batch.number % 2)
            previous = self._slots.get(slot)
            if previous is not None and previous != batch.segment:  # the front gave the slot a larger block
                self.reader.forget(previous)
            self._slots[slot] = batch.segment
            packed.append(self.reader.frames(batch))
        frames = packed[0] if len(packed) == 1 else PackedFrames.joined(packed)
        # Each front numbers its own cameras: the owner tells them apart by front.
        sourced = [(front, batch.sources) for front, batch in parts if batch.sources is not None]
        sources = None
        if len(sourced) == len(parts):
            sources = Sources.joined([s for _, s in sourced], [front for front, _ in sourced])
        return self.processor.begin(frames, [None] * len(frames), sources)

    def _send(self, front: int, message: Answered | None) -> None:
        try:
            self.connections[front].send(message)
        except OSError:  # the front died with batches under way: their frames stay uncommitted there
            if message is not None:
                log.warning("front %d is gone: the answer to its batch %d is dropped", front, message.number)
