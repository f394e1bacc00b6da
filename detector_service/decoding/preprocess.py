"""JPEG bytes -> one uint8 batch at the network's input size, decoded in a thread pool.

Each image is scaled to fit the input (aspect kept) and placed at the top-left of a zero canvas,
so mapping boxes back is a single division. OpenCV releases the GIL while decoding and
resizing, so the pool's threads run truly in parallel.
"""

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import cv2
import numpy as np

from facestream.detector_service.decoding.placements import DecodeError, HostImages, Placed, Placements
from facestream.schemas import Frame


class Preprocessor:
    def __init__(self, input_hw: tuple[int, int], threads: int, keep_frames: bool = False) -> None:
        self.input_hw = input_hw
        self.keep_frames = keep_frames
        self._pool = ThreadPoolExecutor(max_workers=max(1, threads), thread_name_prefix="decode")

    def run(self, frames: Sequence[Frame]) -> tuple[np.ndarray, Placements]:
        """Decode and letterbox every frame; a failure is said in its slot, never raised."""
        batch = np.zeros((len(frames), *self.input_hw, 3), dtype=np.uint8)
        done = list(self._pool.map(self._place, frames, batch))
        images = HostImages([image for _, image in done]) if self.keep_frames else None
        return batch, Placements.of([placed for placed, _ in done], images)

    def close(self) -> None:
        self._pool.shutdown(wait=True)

    def _place(self, frame: Frame, canvas: np.ndarray) -> tuple[Placed | DecodeError, np.ndarray | None]:
        try:
            image = decode_jpeg(frame)
            return letterbox_into(image, canvas), image
        except DecodeError as exc:
            return exc, None


def decode_jpeg(frame: Frame) -> np.ndarray:
    image = cv2.imdecode(np.frombuffer(frame.data, dtype=np.uint8), cv2.IMREAD_COLOR)
    if image is None:
        raise DecodeError(f"{len(frame.data)} bytes of {frame.encoding} data do not decode to an image")
    height, width = image.shape[:2]
    if (width, height) != (frame.width, frame.height):
        raise DecodeError(f"message says {frame.width}x{frame.height}, image is {width}x{height}")
    return image


def letterbox_into(image: np.ndarray, canvas: np.ndarray) -> Placed:
    """Scale ``image`` to fit ``canvas`` (H, W, 3) keeping its aspect; fill from the top-left."""
    height, width = image.shape[:2]
    scale = min(canvas.shape[0] / height, canvas.shape[1] / width)
    new_w, new_h = fitted(width, height, scale)
    interp = cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR
    canvas[:new_h, :new_w] = cv2.resize(image, (new_w, new_h), interpolation=interp)
    return Placed(scale=scale, width=width, height=height)


def fitted(width: int, height: int, scale: float) -> tuple[int, int]:
    """The letterboxed image's size: the frame scaled, rounded, never empty (both decoders use it)."""
    return max(1, round(width * scale)), max(1, round(height * scale))
