"""Where the frames of a batch landed in it, as arrays over the batch, and why any did not decode.

Boxes leave the network in letterbox pixels; undoing the letterbox needs each frame's scale and true
size, and an embedder needs each frame's full-size image. At GPU rates (20,000 frames a second) a
Python object per frame costs the interpreter that decoding shares, once per image, in the decoder,
in the answer the GPU owner pickles to its fronts and in the code reading it there. So a batch's
placement is one ``Placements`` of arrays, and the kept images are a host list (``HostImages``) or a
table of device addresses (``DeviceImages``). ``Placed`` is one frame's view of it, made only when
someone asks for one frame (tests, one-off tools).
"""

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np


class DecodeError(ValueError):
    """A frame's bytes are not a usable image; the frame goes to the dead-letter topic."""


@dataclass(frozen=True)
class Placed:
    """Where one frame landed in the batch: its scale and its true size (and, when asked to keep it,
    the full-size decoded image: a host array, or a CuPy array in device memory on the GPU path)."""

    scale: float
    width: int
    height: int
    image: object = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class HostImages:
    """The full-size decoded frames on the host, one (H, W, 3) BGR array per frame (None where it failed)."""

    arrays: list

    def take(self, rows: np.ndarray) -> "HostImages":
        return HostImages([self.arrays[i] for i in rows.tolist()])

    def __getitem__(self, index: int):
        return self.arrays[index]

    def __len__(self) -> int:
        return len(self.arrays)


@dataclass(frozen=True)
class DeviceImages:
    """The full-size decoded frames in device memory, as a table: each frame's address (0 where it
    failed), height and width, packed (H, W, 3) uint8 RGB rows. ``keeps`` holds whatever owns that
    memory (a buffer, nvImageCodec's Images) for as long as the table is in use."""

    addresses: np.ndarray  # (N,) int64
    heights: np.ndarray  # (N,) int64
    widths: np.ndarray  # (N,) int64
    keeps: object = field(default=None, repr=False)

    @classmethod
    def of_arrays(cls, images: Sequence) -> "DeviceImages":
        """The table of device arrays (anything with ``__cuda_array_interface__``), read one by one:
        for tools and tests that hold a few; the decoder makes its table without a look at each image."""
        rows = np.array([_address_and_size(image) for image in images], dtype=np.int64).reshape(-1, 3)
        return cls(rows[:, 0], rows[:, 1], rows[:, 2], list(images))

    def take(self, rows: np.ndarray) -> "DeviceImages":
        return DeviceImages(self.addresses[rows], self.heights[rows], self.widths[rows], self.keeps)

    def __getitem__(self, index: int):
        """Frame ``index`` as a CuPy (H, W, 3) uint8 view of the memory the table points at."""
        import cupy as cp

        if not self.addresses[index]:
            return None
        height, width = int(self.heights[index]), int(self.widths[index])
        memory = cp.cuda.UnownedMemory(int(self.addresses[index]), height * width * 3, self.keeps)
        return cp.ndarray((height, width, 3), dtype=cp.uint8, memptr=cp.cuda.MemoryPointer(memory, 0))

    def __len__(self) -> int:
        return len(self.addresses)


def _address_and_size(image) -> tuple[int, int, int]:
    """A device image's address, height and width; its rows must be packed, as the kernels read them."""
    interface = image.__cuda_array_interface__
    height, width, channels = interface["shape"]
    strides = interface.get("strides")
    if channels != 3 or (strides is not None and tuple(strides) != (width * 3, 3, 1)):
        raise ValueError(f"expected a packed (H, W, 3) uint8 image, got shape {interface['shape']}, strides {strides}")
    return interface["data"][0], height, width


@dataclass(frozen=True, eq=False)
class Placements:
    """Every frame of a batch: its letterbox scale and true (width, height) (zeros where it failed),
    why each failed frame did not decode, and with ``keep_frames`` the full-size images."""

    scale: np.ndarray  # (N,) float64
    sizes: np.ndarray  # (N, 2) int64: width, height
    errors: dict[int, str] = field(default_factory=dict)  # frame index -> why it did not decode
    images: HostImages | DeviceImages | None = None

    @classmethod
    def of(cls, items: Sequence[Placed | DecodeError], images: HostImages | DeviceImages | None = None):
        """From one result per frame (the CPU decoder's pool answers frame by frame)."""
        scale = np.zeros(len(items), dtype=np.float64)
        sizes = np.zeros((len(items), 2), dtype=np.int64)
        errors = {}
        for i, item in enumerate(items):
            if isinstance(item, DecodeError):
                errors[i] = str(item)
            else:
                scale[i], sizes[i] = item.scale, (item.width, item.height)
        return cls(scale, sizes, errors, images)

    @property
    def good(self) -> np.ndarray:
        """The frames that decoded, in batch order."""
        if not self.errors:
            return np.arange(len(self.scale))
        decoded = np.ones(len(self.scale), dtype=bool)
        decoded[list(self.errors)] = False
        return np.flatnonzero(decoded)

    def decoded(self) -> "Placements":
        """The frames that decoded, in batch order (this one, if all did)."""
        return self.take(self.good) if self.errors else self

    def take(self, rows: Sequence[int] | np.ndarray | slice) -> "Placements":
        """The frames ``rows`` (indices or a slice), numbered from 0 in that order."""
        picked = np.arange(len(self.scale))[rows] if isinstance(rows, slice) else np.asarray(rows, dtype=np.int64)
        errors = {}
        for old, why in self.errors.items():  # few: one per frame that failed
            for new in np.flatnonzero(picked == old).tolist():
                errors[new] = why
        images = None if self.images is None else self.images.take(picked)
        return Placements(self.scale[picked], self.sizes[picked], errors, images)

    def __len__(self) -> int:
        return len(self.scale)

    def __getitem__(self, index: int) -> Placed | DecodeError:
        """Frame ``index`` on its own: a Placed (with its image, if kept) or the DecodeError it met."""
        if index in self.errors:
            return DecodeError(self.errors[index])
        width, height = self.sizes[index].tolist()
        image = None if self.images is None else self.images[index]
        return Placed(float(self.scale[index]), width, height, image)

    def __iter__(self) -> Iterator[Placed | DecodeError]:
        return (self[i] for i in range(len(self)))

    def __eq__(self, other: object) -> bool:
        """The same scales, sizes and errors (images are not compared, as with Placed)."""
        if not isinstance(other, Placements):
            return NotImplemented
        return (
            np.array_equal(self.scale, other.scale)
            and np.array_equal(self.sizes, other.sizes)
            and self.errors == other.errors
        )

    __hash__ = None  # type: ignore[assignment]  # arrays inside: not hashable
