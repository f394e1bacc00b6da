import dataclasses
import math

import msgpack
import pytest

from facestream.schemas import (
    DetectionEvent,
    Face,
    ModelRef,
    SchemaError,
    event_id_for,
    pack_detection,
    unpack_detection,
)

MODEL = ModelRef("yunet", "2023mar", "8f23")
SFACE = ModelRef("sface", "2021dec", "0ba9")
FACES = (
    Face(box=(10.0, 20.0, 110.0, 150.0), score=0.93, landmarks=((30.0, 60.0), (80.0, 61.0))),
    Face(box=(300.0, 40.0, 340.0, 90.0), score=0.61),
)
VALID = DetectionEvent(
    event_id=event_id_for("door", 7, MODEL),
    camera_id="door",
    frame_seq=7,
    capture_ts_ns=1,
    detect_ts_ns=2,
    model=MODEL,
    width=640,
    height=480,
    faces=FACES,
)


def raw(**changes) -> bytes:
    fields = {"schema_version": 1, **VALID.fields(), **changes}
    return msgpack.packb({k: v for k, v in fields.items() if v is not ...}, use_bin_type=True)


def face(**changes) -> dict:
    return {**FACES[0].fields(), **changes}


def test_round_trip() -> None:
    assert unpack_detection(pack_detection(VALID)) == VALID


def test_embeddings_round_trip_with_their_model() -> None:
    vector = bytes(range(256))  # 128 float16 values
    event = dataclasses.replace(
        VALID, faces=(dataclasses.replace(FACES[0], embedding=vector), FACES[1]), embedder=SFACE
    )
    decoded = unpack_detection(pack_detection(event))
    assert decoded == event and decoded.faces[0].embedding == vector and decoded.embedder == SFACE
    sharp = dataclasses.replace(event, faces=(dataclasses.replace(event.faces[0], sharpness=412.5), FACES[1]))
    assert unpack_detection(pack_detection(sharp)).faces[0].sharpness == 412.5


def test_skipped_frames_are_announced_only_when_there_are_any() -> None:
    event = dataclasses.replace(VALID, skipped_before=3)
    assert unpack_detection(pack_detection(event)).skipped_before == 3
    assert "skipped_before" not in VALID.fields()


def test_event_ids_are_deterministic_and_distinct() -> None:
    assert event_id_for("door", 7, MODEL) == event_id_for("door", 7, MODEL)
    others = {
        event_id_for("door", 8, MODEL),
        event_id_for("gate", 7, MODEL),
        event_id_for("door", 7, ModelRef("yunet", "2023mar", "other")),
    }
    assert len(others | {VALID.event_id}) == 4


def test_unknown_fields_are_ignored_at_every_level() -> None:
    decoded = unpack_detection(raw(zone="lobby", faces=[face(age=40), FACES[1].fields()]))
    assert decoded == VALID


@pytest.mark.parametrize(
    ("changes", "field", "words"),
    [
        ({"schema_version": 3}, "schema_version", "newer"),
        ({"event_id": ...}, "event_id", "missing"),
        ({"detect_ts_ns": -5}, "detect_ts_ns", ">= 0"),
        ({"model": "yunet"}, "model", "map"),
        ({"model": {"name": "yunet", "version": "1"}}, "model.weights_sha256", "missing"),
        ({"height": 0}, "height", ">= 1"),
        ({"faces": ...}, "faces", "missing"),
        ({"faces": {}}, "faces", "list"),
        ({"faces": [5]}, "faces[0]", "map"),
        ({"faces": [{"score": 0.5}]}, "faces[0].box", "missing"),
        ({"faces": [face(box=[1, 2, 3])]}, "faces[0].box", "4 items"),
        ({"faces": [face(box=[5, 2, 3, 4])]}, "faces[0].box", "x0 <= x1"),
        ({"faces": [face(box=[1, 2, math.nan, 4])]}, "faces[0].box", "finite"),
        ({"faces": [face(box=[1, 2, "3", 4])]}, "faces[0].box", "finite"),
        ({"faces": [face(score=1.5)]}, "faces[0].score", "0..1"),
        ({"faces": [face(embedding=b"\x00\x3c")]}, "embedder", "missing, while faces carry embeddings"),
        ({"embedder": SFACE.fields(), "faces": [face(embedding=b"abc")]}, "faces[0].embedding", "even length"),
        ({"embedder": SFACE.fields(), "faces": [face(embedding=[1.0, 2.0])]}, "faces[0].embedding", "float16"),
        ({"embedder": SFACE.fields(), "faces": [face(embedding=bytes(4098))]}, "faces[0].embedding", "at most"),
        ({"embedder": {"name": "sface"}}, "embedder.version", "missing"),
        ({"faces": [{"box": [1, 2, 3, 4]}]}, "faces[0].score", "missing"),
        ({"faces": [face(landmarks=[[1, 2, 3]])]}, "faces[0].landmarks", "2 items"),
        ({"faces": [face(landmarks=5)]}, "faces[0].landmarks", "list"),
        ({"faces": [face(sharpness=-1.0)]}, "faces[0].sharpness", "0 or more"),
        ({"faces": [face(sharpness="sharp")]}, "faces[0].sharpness", "finite"),
        ({"skipped_before": 0}, "skipped_before", ">= 1"),
        ({"skipped_before": True}, "skipped_before", "integer"),
    ],
)
def test_each_invalid_field_is_named(changes: dict, field: str, words: str) -> None:
    with pytest.raises(SchemaError) as err:
        unpack_detection(raw(**changes))
    assert err.value.field == field
    assert words in str(err.value)


def test_encoder_validates_too() -> None:
    bad = dataclasses.replace(VALID, faces=(Face((5, 0, 1, 1), 0.5),))
    with pytest.raises(SchemaError, match=r"faces\[0\]\.box"):
        pack_detection(bad)
