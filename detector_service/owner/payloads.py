"""JPEG bytes from a front to the GPU owner through shared memory: only a small descriptor crosses the
pipe. Host bytes need no CUDA IPC: the owner reads the front's pages where they lie.

A front has two slots, one per batch it may have under way (``slot = batch number % 2``): a slot is
written again only after the owner has answered the batch that used it two batches before, so the
owner never reads a slot while it is rewritten. A batch larger than its slot gets a new, larger slot
(said in the log); the owner follows the descriptor's name and lets the old one go.
"""

import logging
import mmap
from dataclasses import dataclass
from multiprocessing import shared_memory
from pathlib import Path

import numpy as np

from facestream.detector_service.decoding.packed import PackedFrames
from facestream.detector_service.tracks import Sources
from facestream.schemas import Frame

log = logging.getLogger(__name__)

SLOT_BYTES = 32 << 20  # a batch of 256 frames of 640x480 takes about 15 MB
SHM_DIR = Path("/dev/shm")  # where Linux keeps POSIX shared memory (a container's is 64 MB unless set)


@dataclass(frozen=True)
class Batch:
    """Where a batch's JPEGs lie and what the owner needs to decode and place them."""

    number: int  # the front's count of batches: answers come back in this order
    segment: str  # the shared memory block's name
    ends: np.ndarray  # int64: the end of each frame's bytes in the block (each starts where the last ended)
    sizes: np.ndarray  # int32 (N, 2): each frame's width and height, as its message says
    sources: Sources | None = None  # with an embedder: each frame's camera, number and capture time

    def __len__(self) -> int:
        return len(self.ends)


class Writer:
    """A front's two slots."""

    def __init__(self, slot_bytes: int = SLOT_BYTES) -> None:
        self._slots = [self._new(slot_bytes), self._new(slot_bytes)]
        self._number = 0

    @staticmethod
    def _new(size: int) -> shared_memory.SharedMemory:
        return shared_memory.SharedMemory(create=True, size=size)

    def write(self, frames: list[Frame], sources: Sources | None = None) -> Batch:
        """Copy ``frames``' bytes into the next slot; the descriptor to send (with ``sources``, if given)."""
        index = self._number % 2
        lengths = np.fromiter((len(f.data) for f in frames), dtype=np.int64, count=len(frames))
        ends = np.cumsum(lengths)
        total = int(ends[-1]) if len(frames) else 0
        slot = self._slots[index]
        if total > slot.size:
            grown = max(total, 2 * slot.size)
            log.info(
                "a batch of %d frames takes %d MB: its shared memory slot grows to %d MB",
                len(frames),
                total >> 20,
                grown >> 20,
            )
            self._release(slot)
            slot = self._slots[index] = self._new(grown)
        view = slot.buf
        assert view is not None  # None only once the segment is closed
        start = 0
        for frame, end in zip(frames, ends.tolist()):
            view[start:end] = frame.data
            start = end
        sizes = np.array([(f.width, f.height) for f in frames], dtype=np.int32).reshape(-1, 2)
        batch = Batch(self._number, slot.name, ends, sizes, sources)
        self._number += 1
        return batch

    @staticmethod
    def _release(slot: shared_memory.SharedMemory) -> None:
        slot.close()
        slot.unlink()

    def close(self) -> None:
        for slot in self._slots:
            self._release(slot)


class Reader:
    """The owner's view of every front's slots, mapped read-only by name as descriptors name them.

    Mapped from ``/dev/shm`` rather than through ``SharedMemory``, whose resource tracker would adopt
    the block and unlink it when the owner exits, under a front still using it: the front made it,
    the front unlinks it."""

    def __init__(self) -> None:
        self._mapped: dict[str, np.ndarray] = {}  # segment -> its bytes

    def frames(self, batch: Batch) -> PackedFrames:
        """The batch's frames as the decoders take them: the block itself with each frame's place and
        the size its message gave (no copy: in a py-spy profile on the H200, copying the bytes was the
        owner's largest holder of its interpreter, which its decoding thread needs back for every
        image; camera and sequence stay with the front, which builds the events)."""
        block = self._mapped.get(batch.segment)
        if block is None:
            block = self._mapped[batch.segment] = np.frombuffer(_map(batch.segment), dtype=np.uint8)
        return PackedFrames.of(block, batch.ends, batch.sizes)

    def forget(self, segment: str) -> None:
        """A front replaced or closed this block: it is unmapped once no frame views it any more."""
        self._mapped.pop(segment, None)

    def close(self) -> None:
        for name in list(self._mapped):
            self.forget(name)


def _map(name: str) -> mmap.mmap:
    with open(SHM_DIR / name.lstrip("/"), "rb") as file:
        return mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
