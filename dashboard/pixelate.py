"""Faces made unrecognisable in a frame: each box turned into a few large blocks. The dashboard does
it to faces a viewer may not see (``dashboard/blur.py``), in frames, evidence and clips alike."""

from collections.abc import Sequence

import numpy as np

Box = tuple[float, float, float, float]
CELLS = 8  # a pixelated face is this many blocks across: no one is recognised by it


def pixelate(image: np.ndarray, boxes: Sequence[Box]) -> np.ndarray:
    """``image`` (BGR, changed in place) with each box turned into CELLS x CELLS blocks, a margin around it."""
    import cv2

    height, width = image.shape[:2]
    for x0, y0, x1, y1 in boxes:
        pad_x, pad_y = (x1 - x0) * 0.15, (y1 - y0) * 0.15
        left, top = max(0, int(x0 - pad_x)), max(0, int(y0 - pad_y))
        right, bottom = min(width, int(x1 + pad_x) + 1), min(height, int(y1 + pad_y) + 1)
        if right - left < 2 or bottom - top < 2:
            continue
        region = image[top:bottom, left:right]
        small = cv2.resize(region, (CELLS, CELLS), interpolation=cv2.INTER_AREA)
        image[top:bottom, left:right] = cv2.resize(small, (right - left, bottom - top), interpolation=cv2.INTER_NEAREST)
    return image


def pixelated_jpeg(jpeg: bytes, boxes: Sequence[Box]) -> bytes:
    """``jpeg`` with ``boxes`` pixelated (as it is when there are none, or it does not decode)."""
    import cv2

    if not boxes:
        return jpeg
    image = cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR)
    if image is None:
        return jpeg
    ok, out = cv2.imencode(".jpg", pixelate(image, boxes), [cv2.IMWRITE_JPEG_QUALITY, 85])
    return out.tobytes() if ok else jpeg
