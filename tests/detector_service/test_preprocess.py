import cv2
import numpy as np
import pytest

from facestream.detector_service.decoding.preprocess import (
    DecodeError,
    Placed,
    Preprocessor,
    decode_jpeg,
    letterbox_into,
)
from facestream.schemas import Frame


def jpeg(width: int, height: int) -> bytes:
    image = np.zeros((height, width, 3), np.uint8)
    image[:, :, 2] = np.linspace(0, 255, width, dtype=np.uint8)
    return cv2.imencode(".jpg", image)[1].tobytes()


def frame(data: bytes, width: int, height: int) -> Frame:
    return Frame("cam", 0, 0, width, height, data)


def test_letterbox_keeps_aspect_at_top_left() -> None:
    canvas = np.zeros((480, 640, 3), np.uint8)
    placed = letterbox_into(np.full((1000, 500, 3), 200, np.uint8), canvas)
    assert placed == Placed(scale=0.48, width=500, height=1000)
    assert canvas[:480, :240].min() == 200 and canvas[:, 240:].max() == 0


def test_small_images_are_scaled_up() -> None:
    canvas = np.zeros((480, 640, 3), np.uint8)
    assert letterbox_into(np.ones((120, 160, 3), np.uint8), canvas).scale == 4.0


def test_decode_errors_are_clear() -> None:
    with pytest.raises(DecodeError, match="do not decode"):
        decode_jpeg(frame(b"\xff\xd8 not really", 640, 480))
    with pytest.raises(DecodeError, match="says 640x480, image is 320x240"):
        decode_jpeg(frame(jpeg(320, 240), 640, 480))


def test_batch_keeps_failures_in_their_slots() -> None:
    pre = Preprocessor((96, 128), threads=2)
    try:
        batch, placed = pre.run([frame(jpeg(256, 192), 256, 192), frame(b"junk", 10, 10), frame(jpeg(64, 48), 64, 48)])
    finally:
        pre.close()
    assert batch.shape == (3, 96, 128, 3)
    assert isinstance(placed[0], Placed) and placed[0].scale == 0.5
    assert isinstance(placed[1], DecodeError) and batch[1].max() == 0
    assert isinstance(placed[2], Placed) and placed[2].scale == 2.0
