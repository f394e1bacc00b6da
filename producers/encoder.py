"""BGR image -> JPEG bytes: scaled down to a maximum width first (cameras often send more than needed),
or made exactly one frame size, as a camera of that resolution would frame the scene."""

from dataclasses import dataclass

import cv2
import numpy as np


@dataclass(frozen=True)
class JpegEncoder:
    quality: int = 85
    max_width: int = 1280  # 0 keeps the source's width
    frame_size: tuple[int, int] | None = None  # (width, height): every frame exactly this; max_width then unused

    def encode(self, image: np.ndarray) -> tuple[bytes, int, int]:
        """Return (jpeg bytes, width, height) of the image as sent."""
        if self.frame_size is not None:
            image = cover_crop(image, *self.frame_size)
        height, width = image.shape[:2]
        if self.frame_size is None and self.max_width and width > self.max_width:
            height = max(1, round(height * self.max_width / width))
            width = self.max_width
            image = cv2.resize(image, (width, height), interpolation=cv2.INTER_AREA)
        ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, self.quality])
        if not ok:
            raise ValueError("OpenCV failed to encode a JPEG")
        return buf.tobytes(), width, height


def cover_crop(image: np.ndarray, width: int, height: int) -> np.ndarray:
    """Scale ``image`` to cover ``width`` x ``height`` (aspect kept), then cut the centre to exactly that."""
    src_h, src_w = image.shape[:2]
    scale = max(width / src_w, height / src_h)
    cover_w, cover_h = max(width, round(src_w * scale)), max(height, round(src_h * scale))
    interp = cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR
    covered = cv2.resize(image, (cover_w, cover_h), interpolation=interp)
    left, top = (cover_w - width) // 2, (cover_h - height) // 2
    return covered[top : top + height, left : left + width]
