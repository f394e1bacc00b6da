"""A front's processor: the same ``begin``/``finish`` the service drives, answered by the GPU owner.

``begin`` copies the batch's JPEGs into shared memory and sends their descriptor; a thread receives
the owner's answers, in order, and completes each batch's future; ``finish`` turns the answer's
candidates into boxes (when the owner left them) and builds the events here, in the front's own
interpreter. If the owner stops, every batch under way
fails with its reason, and so does the service.
"""

import logging
import threading
import time
from collections import deque
from concurrent.futures import Future
from multiprocessing.connection import Connection

from facestream.detector_service.owner.payloads import SLOT_BYTES, Writer
from facestream.detector_service.owner.server import Answered, Failed, Started
from facestream.detector_service.processor import Outcome, Pending, outcomes
from facestream.detector_service.stats import Stats
from facestream.detector_service.tracks import CameraKeys
from facestream.errors import ModelError
from facestream.schemas import Frame

log = logging.getLogger(__name__)


class OwnerStopped(ModelError):
    """The GPU owner failed or went away: no batch can be answered."""

    def __init__(self, message: str, exit_code: int = ModelError.exit_code) -> None:
        super().__init__(f"the GPU owner process stopped: {message}")
        self.exit_code = exit_code


class RemoteProcessor:
    def __init__(self, connection: Connection, slot_bytes: int = SLOT_BYTES, start_timeout_s: float = 600.0) -> None:
        self.connection = connection
        if not connection.poll(start_timeout_s):  # a TensorRT build can take minutes
            raise OwnerStopped(f"it did not say it was ready within {start_timeout_s:.0f} s")
        started = self._received()
        if not isinstance(started, Started):
            raise OwnerStopped(f"it began with {type(started).__name__}, not Started")
        self.describes = started.describes
        self.boxes = started.boxes
        self.stats = Stats(provider=started.provider, fallback=started.fallback, warning=started.warning)
        self.stats.decoder, self.stats.decode_fallback = started.decoder, started.decode_fallback
        self._writer = Writer(slot_bytes)
        # With an embedder the owner follows faces per camera: it is told each frame's camera by number.
        self._camera_keys = CameraKeys() if self.describes.embedder is not None else None
        self._waiting: deque[Future] = deque()
        self._lock = threading.Lock()
        self._stopped: OwnerStopped | None = None
        self._receiver = threading.Thread(target=self._receive, name="owner-answers", daemon=True)
        self._receiver.start()

    def _received(self):
        try:
            message = self.connection.recv()
        except (EOFError, OSError):
            raise OwnerStopped("its pipe closed (the process died; its log says why)") from None
        if isinstance(message, Failed):
            raise OwnerStopped(message.message, message.exit_code)
        return message

    def describe(self) -> str:
        return self.describes.line

    def begin(self, frames: list[Frame], tags: list) -> Pending:
        future: Future = Future()
        with self._lock:
            if self._stopped is not None:
                raise self._stopped
            if len(self._waiting) >= 2:
                raise RuntimeError("a front has at most two batches under way (its slots are reused)")
            self._waiting.append(future)
        sources = None if self._camera_keys is None else self._camera_keys.sources(frames)
        self.connection.send(self._writer.write(frames, sources))
        return Pending(frames, tags, future)

    def _receive(self) -> None:
        """Complete each batch's future with the owner's answer, oldest first."""
        while True:
            try:
                message = self._received()
            except OwnerStopped as stopped:
                self._stop(stopped)
                return
            if message is None:  # the owner's goodbye: every batch we sent is answered
                return
            with self._lock:
                future = self._waiting.popleft()
            if isinstance(message, Answered):
                future.set_result(message.answer)
            else:
                future.set_exception(OwnerStopped(f"it sent {type(message).__name__}, not an answer"))

    def _stop(self, stopped: OwnerStopped) -> None:
        with self._lock:
            self._stopped = stopped
            waiting, self._waiting = self._waiting, deque()
        for future in waiting:
            future.set_exception(stopped)

    def finish(self, pending: Pending) -> list[Outcome]:
        answer = self.boxes.resolve(pending.future.result())  # candidates -> boxes, timed as post-processing
        t0 = time.perf_counter()
        done = outcomes(answer, pending.frames, pending.tags, self.describes)
        self.stats.add_batch(
            len(pending.frames), answer.seconds, events_s=time.perf_counter() - t0, embedded=answer.embedded
        )
        return done

    def close(self) -> None:
        """Say goodbye (batches under way are answered first), then free the slots."""
        try:
            self.connection.send(None)
        except OSError:
            pass
        self._receiver.join(timeout=30.0)
        self.connection.close()
        self._writer.close()
