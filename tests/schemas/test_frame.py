import msgpack
import pytest

from facestream.schemas import Frame, SchemaError, pack_frame, unpack_frame

VALID = Frame(
    camera_id="door", frame_seq=7, capture_ts_ns=1_700_000_000_000_000_000, width=640, height=480, data=b"\xff\xd8jpeg"
)


def raw(**changes) -> bytes:
    fields = {"schema_version": 1, **VALID.fields(), **changes}
    return msgpack.packb({k: v for k, v in fields.items() if v is not ...}, use_bin_type=True)


def test_round_trip() -> None:
    assert unpack_frame(pack_frame(VALID)) == VALID


def test_frames_held_back_by_the_producer_ride_on_the_next_one() -> None:
    gated = Frame("door", 9, 1, 640, 480, b"\xff\xd8jpeg", skipped_before=3)
    assert unpack_frame(pack_frame(gated)) == gated
    assert "skipped_before" not in msgpack.unpackb(pack_frame(VALID))  # absent when nothing was held back


def test_unknown_fields_are_ignored() -> None:
    assert unpack_frame(raw(exposure_ms=8, tags=["a"])) == VALID


@pytest.mark.parametrize(
    ("changes", "field", "words"),
    [
        ({"schema_version": 2}, "schema_version", "newer"),
        ({"schema_version": 0}, "schema_version", ">= 1"),
        ({"schema_version": ...}, "schema_version", "missing"),
        ({"schema_version": "1"}, "schema_version", "integer"),
        ({"camera_id": ...}, "camera_id", "missing"),
        ({"camera_id": ""}, "camera_id", "1 to 255"),
        ({"camera_id": 5}, "camera_id", "string"),
        ({"frame_seq": -1}, "frame_seq", ">= 0"),
        ({"frame_seq": True}, "frame_seq", "integer"),
        ({"frame_seq": 1.5}, "frame_seq", "integer"),
        ({"capture_ts_ns": ...}, "capture_ts_ns", "missing"),
        ({"width": 0}, "width", ">= 1"),
        ({"height": ...}, "height", "missing"),
        ({"encoding": "png"}, "encoding", "unsupported"),
        ({"data": b""}, "data", "empty"),
        ({"data": "text"}, "data", "bytes"),
        ({"skipped_before": 0}, "skipped_before", ">= 1"),
        ({"skipped_before": 2.0}, "skipped_before", "integer"),
    ],
)
def test_each_invalid_field_is_named(changes: dict, field: str, words: str) -> None:
    with pytest.raises(SchemaError) as err:
        unpack_frame(raw(**changes))
    assert err.value.field == field
    assert words in str(err.value)
    assert str(err.value).startswith(f"Frame.{field}:")


@pytest.mark.parametrize(
    ("payload", "words"),
    [
        (b"", "empty payload"),
        (b"\xc1", "not valid msgpack"),
        (msgpack.packb([1, 2]), "expected a msgpack map"),
        (msgpack.packb({1: 2}), "not valid msgpack"),
    ],
)
def test_unreadable_payloads(payload: bytes, words: str) -> None:
    with pytest.raises(SchemaError, match=words):
        unpack_frame(payload)


def test_encoder_validates_too() -> None:
    with pytest.raises(SchemaError, match="Frame.width"):
        pack_frame(Frame("door", 1, 1, 0, 480, b"x"))
