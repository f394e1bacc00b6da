import dataclasses

import msgpack
import pytest

from facestream.schemas import (
    KEYPOINT_NAMES,
    ModelRef,
    Person,
    PoseEvent,
    SchemaError,
    event_id_for,
    pack_pose,
    unpack_pose,
)

MODEL = ModelRef("movenet", "multipose-lightning-fp16-1", "d448")
STANDING = Person(
    box=(100.0, 50.0, 180.0, 400.0),
    score=0.7,
    keypoints=tuple((140.0, 60.0 + 20.0 * i, 0.9) for i in range(len(KEYPOINT_NAMES))),
)
VALID = PoseEvent(
    event_id=event_id_for("hall", 3, MODEL),
    camera_id="hall",
    frame_seq=3,
    capture_ts_ns=1,
    detect_ts_ns=2,
    model=MODEL,
    width=768,
    height=576,
    persons=(STANDING,),
)


def raw(**changes) -> bytes:
    return msgpack.packb({"schema_version": 1, **VALID.fields(), **changes}, use_bin_type=True)


def test_round_trip_and_named_keypoints() -> None:
    event = unpack_pose(pack_pose(VALID))
    assert event == VALID
    assert event.persons[0].point("left_hip") == (140.0, 60.0 + 20.0 * 11, 0.9)
    empty = dataclasses.replace(VALID, persons=(), skipped_before=4)
    assert unpack_pose(pack_pose(empty)) == empty


@pytest.mark.parametrize(
    ("person", "field"),
    [
        ({**STANDING.fields(), "keypoints": STANDING.fields()["keypoints"][:16]}, "persons[0].keypoints"),
        ({**STANDING.fields(), "keypoints": [[1.0, 2.0]] * 17}, "persons[0].keypoints"),
        ({**STANDING.fields(), "keypoints": [[1.0, 2.0, 1.5]] * 17}, "persons[0].keypoints[0]"),
        ({**STANDING.fields(), "keypoints": [[1.0, float("nan"), 0.5]] * 17}, "persons[0].keypoints"),
        ({**STANDING.fields(), "box": [10.0, 0.0, 5.0, 1.0]}, "persons[0].box"),
        ({**STANDING.fields(), "score": -0.1}, "persons[0].score"),
        ("a person", "persons[0]"),
    ],
)
def test_bad_persons_are_named(person, field: str) -> None:
    with pytest.raises(SchemaError) as caught:
        unpack_pose(raw(persons=[person]))
    assert caught.value.field == field


def test_a_newer_major_version_is_refused() -> None:
    with pytest.raises(SchemaError, match="upgrade facestream"):
        unpack_pose(raw(schema_version=2))
