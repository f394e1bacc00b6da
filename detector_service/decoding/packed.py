"""A batch's JPEGs lying in host buffers, each frame a range of one, as the GPU owner reads them from
its fronts' shared memory: native decoding (``--gpu-decoder .../native``) hands nvImageCodec each
frame's address as it is, with no Frame per image; anything else indexes the batch and gets each frame
as a view."""

from collections.abc import Sequence
from typing import cast, overload

import numpy as np

from facestream.schemas import Frame


class PackedFrames(Sequence[Frame]):
    def __init__(
        self, blocks: list[np.ndarray], block_of: np.ndarray, starts: np.ndarray, ends: np.ndarray, sizes: np.ndarray
    ) -> None:
        self.blocks = blocks  # uint8 buffers, kept alive while the batch is
        self.block_of = block_of  # int64: the block each frame lies in
        self.starts, self.ends = starts, ends  # int64: where each frame's bytes begin and end in its block
        self.sizes = sizes  # int32 (N, 2): each frame's width and height, as its message says

    @classmethod
    def of(cls, block: np.ndarray, ends: np.ndarray, sizes: np.ndarray) -> "PackedFrames":
        """Frames end to end in one block, each ending where ``ends`` says."""
        starts = np.concatenate(([0], ends[:-1])).astype(np.int64)
        return cls([block], np.zeros(len(ends), dtype=np.int64), starts, np.asarray(ends, np.int64), sizes)

    @classmethod
    def joined(cls, parts: "list[PackedFrames]") -> "PackedFrames":
        """One batch of several, in order (the owner merges its fronts' batches into one run)."""
        firsts = np.cumsum([0] + [len(p.blocks) for p in parts[:-1]])
        return cls(
            [block for part in parts for block in part.blocks],
            np.concatenate([part.block_of + first for part, first in zip(parts, firsts)]),
            np.concatenate([part.starts for part in parts]),
            np.concatenate([part.ends for part in parts]),
            np.concatenate([part.sizes for part in parts]).reshape(-1, 2),
        )

    def addresses(self) -> np.ndarray:
        """Each frame's first byte in host memory (int64), for native code to read in place."""
        bases = np.array([block.ctypes.data for block in self.blocks], dtype=np.int64)
        return bases[self.block_of] + self.starts

    def __len__(self) -> int:
        return len(self.starts)

    @overload
    def __getitem__(self, index: int) -> Frame: ...
    @overload
    def __getitem__(self, index: slice) -> list[Frame]: ...
    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        block = self.blocks[int(self.block_of[index])]
        width, height = self.sizes[index].tolist()
        data = cast(bytes, block[int(self.starts[index]) : int(self.ends[index])])  # a view: decoders read either
        return Frame("", 0, 0, width, height, data)  # camera and sequence stay with the front
