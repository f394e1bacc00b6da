"""BGR image -> JPEG bytes, scaled down to a maximum width first (cameras often send more than needed)."""

from dataclasses import dataclass

import cv2
import numpy as np

from facestream.errors import ConfigError


@dataclass(frozen=True)
class JpegEncoder:
    quality: int = 85
    max_width: int = 1280  # 0 keeps the source's width

    def __post_init__(self) -> None:
        if not 1 <= self.quality <= 100:
            raise ConfigError(f"JPEG quality must be 1..100, got {self.quality}")
        if self.max_width < 0:
            raise ConfigError(f"max width must be >= 0, got {self.max_width}")

    def encode(self, image: np.ndarray) -> tuple[bytes, int, int]:
        """Return (jpeg bytes, width, height) of the image as sent."""
        height, width = image.shape[:2]
        if self.max_width and width > self.max_width:
            height = max(1, round(height * self.max_width / width))
            width = self.max_width
            image = cv2.resize(image, (width, height), interpolation=cv2.INTER_AREA)
        ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, self.quality])
        if not ok:
            raise ValueError("OpenCV failed to encode a JPEG")
        return buf.tobytes(), width, height
