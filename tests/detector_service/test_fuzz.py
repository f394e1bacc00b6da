"""Random and mutated input thrown at what reads a frame before the model: the schema, the limits and
the decoder. Whatever comes in, the answer is a value or the error that dead-letters it; nothing else
escapes (hypothesis generates the cases; a failure prints the smallest input that fails)."""

import cv2
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from facestream.detector_service.decoding.preprocess import DecodeError, Placed, Preprocessor
from facestream.detector_service.kafka.limits import FrameLimits, jpeg_size
from facestream.schemas import Frame, SchemaError, pack_frame, unpack_frame

JPEG = cv2.imencode(".jpg", np.random.default_rng(0).integers(0, 256, (48, 64, 3), dtype=np.uint8))[1].tobytes()
VALID = pack_frame(Frame("cam", 7, 1, 64, 48, JPEG))
LIMITS = FrameLimits(max_bytes=1 << 20, max_pixels=1_000_000)
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def mutated(draw, original: bytes) -> bytes:
    """``original`` with a few bytes overwritten, cut or inserted."""
    data = bytearray(original)
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["set", "cut", "insert"]))
        at = draw(st.integers(0, max(len(data) - 1, 0)))
        if kind == "set" and data:
            data[at] = draw(st.integers(0, 255))
        elif kind == "cut":
            del data[at : at + draw(st.integers(1, 64))]
        else:
            data[at:at] = draw(st.binary(min_size=1, max_size=16))
    return bytes(data)


@FUZZ
@given(st.one_of(st.binary(max_size=512), mutated(VALID)))
def test_the_schema_answers_a_frame_or_a_schema_error(data: bytes) -> None:
    try:
        frame = unpack_frame(data)
    except SchemaError:
        return
    LIMITS.problem(len(data), frame)  # a readable frame goes on to the limits, which never raise


@FUZZ
@given(st.one_of(st.binary(max_size=256), mutated(JPEG)))
def test_the_jpeg_header_reader_never_raises(data: bytes) -> None:
    size = jpeg_size(data)
    assert size is None or all(isinstance(v, int) and v >= 0 for v in size)


@FUZZ
@given(st.lists(mutated(JPEG), min_size=1, max_size=4))
def test_the_decoder_answers_each_frame_placed_or_a_decode_error(datas: list[bytes]) -> None:
    frames = [Frame("cam", i, 1, 64, 48, data) for i, data in enumerate(datas)]
    preprocessor = Preprocessor((48, 64), threads=1)
    try:
        _, placed = preprocessor.run(frames)
    finally:
        preprocessor.close()
    assert len(placed) == len(frames) and all(isinstance(p, Placed | DecodeError) for p in placed)
