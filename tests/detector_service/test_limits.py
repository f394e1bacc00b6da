"""Limits checked before decoding: a JPEG's size read from its header, decompression bombs refused."""

import cv2
import numpy as np
import pytest
from helpers.jpeg import bomb

from facestream.detector_service.kafka.limits import FrameLimits, jpeg_size
from facestream.schemas import Frame


def jpeg(width: int, height: int, **params) -> bytes:
    flags = [cv2.IMWRITE_JPEG_PROGRESSIVE, 1] if params.get("progressive") else []
    return cv2.imencode(".jpg", np.full((height, width, 3), 99, np.uint8), flags)[1].tobytes()


@pytest.mark.parametrize("progressive", [False, True])
def test_the_header_gives_the_size(progressive: bool) -> None:
    assert jpeg_size(jpeg(64, 48, progressive=progressive)) == (64, 48)


def test_a_decompression_bomb_is_refused_from_its_header() -> None:
    limits = FrameLimits(max_bytes=1 << 20, max_pixels=40_000_000)
    data = bomb(65535, 65535)
    assert jpeg_size(data) == (65535, 65535)
    problem = limits.problem(len(data), Frame("cam", 0, 1, 16, 16, data))  # the message itself understates it
    assert problem is not None and "JPEG header claims 65535x65535" in problem and "--max-pixels" in problem


def test_the_message_s_own_claim_and_the_record_size_are_checked_too() -> None:
    limits = FrameLimits(max_bytes=1000, max_pixels=40_000_000)
    small = jpeg(16, 16)
    assert limits.problem(len(small), Frame("cam", 0, 1, 16, 16, small)) is None
    assert "--max-frame-bytes" in limits.problem(5000, Frame("cam", 0, 1, 16, 16, small))
    assert "the message claims 10000x10000" in limits.problem(len(small), Frame("cam", 0, 1, 10000, 10000, small))


@pytest.mark.parametrize(
    "data", [b"", b"\xff\xd8", b"\xff\xd8\xff\xc0\x00", b"not a jpeg", b"\xff\xd8\xff\xda\x00\x02"]
)
def test_headers_that_do_not_say_give_none(data: bytes) -> None:
    assert jpeg_size(data) is None
