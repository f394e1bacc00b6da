"""Pose event: the people found in one frame and their body keypoints, on topic ``poses``, key = camera_id."""

from dataclasses import dataclass
from typing import Any

from facestream.schemas import _fields as f
from facestream.schemas.detection import ModelRef, model_ref_from

_TYPE = "PoseEvent"
# COCO's 17 body keypoints, the order every person's ``keypoints`` follow.
KEYPOINT_NAMES = (
    "nose",
    "left_eye",
    "right_eye",
    "left_ear",
    "right_ear",
    "left_shoulder",
    "right_shoulder",
    "left_elbow",
    "right_elbow",
    "left_wrist",
    "right_wrist",
    "left_hip",
    "right_hip",
    "left_knee",
    "right_knee",
    "left_ankle",
    "right_ankle",
)
KEYPOINTS = len(KEYPOINT_NAMES)


@dataclass(frozen=True, slots=True)
class Person:
    box: tuple[float, float, float, float]  # x0, y0, x1, y1 in original frame pixels
    score: float  # 0..1
    keypoints: tuple[tuple[float, float, float], ...]  # KEYPOINTS x (x, y, score), frame pixels, COCO order

    def fields(self) -> dict[str, Any]:
        return {"box": list(self.box), "score": self.score, "keypoints": [list(k) for k in self.keypoints]}

    def point(self, name: str) -> tuple[float, float, float]:
        """One keypoint by its COCO name: (x, y, score)."""
        return self.keypoints[KEYPOINT_NAMES.index(name)]


@dataclass(frozen=True, slots=True)
class PoseEvent:
    event_id: str
    camera_id: str
    frame_seq: int
    capture_ts_ns: int
    detect_ts_ns: int
    model: ModelRef
    width: int
    height: int
    persons: tuple[Person, ...]
    skipped_before: int = 0  # frames of this camera not processed since its previous event (too old, rate, nth)

    def fields(self) -> dict[str, Any]:
        return {**f.outcome_fields(self), "persons": [person.fields() for person in self.persons]}


def _person_from(index: int, value: Any) -> Person:
    where = f"persons[{index}]"
    if not isinstance(value, dict):
        raise f.SchemaError(_TYPE, where, f"expected a map, got {type(value).__name__}")
    points = f.sequence(_TYPE, f"{where}.keypoints", f.present(_TYPE, value, "keypoints", f"{where}."), KEYPOINTS)
    keypoints = tuple(f.floats(_TYPE, f"{where}.keypoints", p, 3) for p in points)
    for i, (_, _, confidence) in enumerate(keypoints):
        f.score(_TYPE, f"{where}.keypoints[{i}]", confidence)
    return Person(
        box=f.box(_TYPE, f"{where}.box", f.present(_TYPE, value, "box", f"{where}.")),
        score=f.score(_TYPE, f"{where}.score", f.present(_TYPE, value, "score", f"{where}.")),
        keypoints=keypoints,  # type: ignore[arg-type]  # three floats each: f.floats checked the length
    )


def pose_from_fields(fields: dict[str, Any]) -> PoseEvent:
    persons = f.sequence(_TYPE, "persons", f.present(_TYPE, fields, "persons"))
    return PoseEvent(
        **f.frame_outcome(_TYPE, fields),
        model=model_ref_from(f.present(_TYPE, fields, "model"), message_type=_TYPE),
        persons=tuple(_person_from(i, p) for i, p in enumerate(persons)),
    )


def pack_pose(event: PoseEvent, check: bool = True) -> bytes:
    """Validate and serialise; raises SchemaError exactly where ``unpack_pose`` would (``check=False``:
    as ``pack_detection``, for events the service built itself)."""
    fields = event.fields()
    if check:
        pose_from_fields(fields)
    return f.pack_map(fields)


def unpack_pose(payload: bytes) -> PoseEvent:
    return pose_from_fields(f.unpack_map(_TYPE, payload))
