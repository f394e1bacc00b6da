"""Hostile JPEGs for the tests (see ``pythonpath`` in pyproject)."""

import cv2
import numpy as np


def bomb(width: int, height: int) -> bytes:
    """A real 16x16 JPEG whose start-of-frame segment is rewritten to claim ``width`` x ``height``: a
    decompression bomb's header, without its cost."""
    data = bytearray(cv2.imencode(".jpg", np.full((16, 16, 3), 99, np.uint8))[1].tobytes())
    at = next(i for i in range(2, len(data) - 1) if data[i] == 0xFF and data[i + 1] == 0xC0)
    data[at + 5 : at + 9] = height.to_bytes(2, "big") + width.to_bytes(2, "big")
    return bytes(data)
