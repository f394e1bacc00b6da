"""A face cut out of a kept frame: a list shows who someone is by a thumbnail of their face, where
the whole frame would show a crowd or a corridor with a face a few pixels high in it."""

from collections.abc import Sequence

import numpy as np

MARGIN = 0.4  # of the box's size, on each side: the head and a little around it
SIDE_MAX = 240  # pixels: a thumbnail's worth, whatever the camera's resolution


def face_crop(jpeg: bytes, box: Sequence[float]) -> bytes:
    """The part of ``jpeg`` around ``box`` (x0, y0, x1, y1 in its pixels), at most SIDE_MAX on a side;
    ``jpeg`` as it is when it does not decode or the box is outside it."""
    import cv2

    image = cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR)
    if image is None:
        return jpeg
    height, width = image.shape[:2]
    x0, y0, x1, y1 = box
    pad_x, pad_y = (x1 - x0) * MARGIN, (y1 - y0) * MARGIN
    left, top = max(0, int(x0 - pad_x)), max(0, int(y0 - pad_y))
    right, bottom = min(width, int(x1 + pad_x) + 1), min(height, int(y1 + pad_y) + 1)
    if right - left < 2 or bottom - top < 2:
        return jpeg
    face = image[top:bottom, left:right]
    scale = SIDE_MAX / max(face.shape[:2])
    if scale < 1:
        face = cv2.resize(face, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    ok, out = cv2.imencode(".jpg", face, [cv2.IMWRITE_JPEG_QUALITY, 85])
    return out.tobytes() if ok else jpeg
