"""The fall rule: a person whose torso drops fast, turns near horizontal and stays down becomes one alert.

Poses come from the pose service (``PoseEvent``); people are followed across frames by
``tracking``. For each tracked person the torso runs from the hips' midpoint to the shoulders'
midpoint: its angle from the vertical (0 upright, 90 lying, 180 upside down), its length (the
person's own scale, whatever their distance from the camera) and the hips' height.

A state machine per person, after the torso-angle and centroid-speed rules of the fall literature
(e.g. Yao, Min and Lu 2017, "A New Approach to Fall Detection Based on the Torso Motion Model"):

- **up**: the torso is within ``upright_deg`` of vertical. Each such frame is the person's baseline:
  when, where the hips were, how long the torso was.
- **impact**: the torso reaches ``down_deg`` or more within ``impact_window_s`` of the last upright
  frame, and the hips have dropped by ``min_drop`` torso lengths or more since then. Bending over
  keeps the hips up; sitting down keeps the torso upright; lying down slowly takes longer than the
  window (and alerts only with ``slow_descent_alerts``).
- **fallen**: no upright frame for ``hold_s`` seconds after the impact: one ``fall`` alert (``new``),
  ``update`` at most every ``update_every_s`` seconds while the person stays down, ``end`` once they
  have been upright again for ``recovery_s`` seconds or have left the picture (unseen for
  ``lost_after_s``); its end time is that moment (the first upright frame plus ``recovery_s``, or the
  last sighting plus ``lost_after_s``). Getting up before ``hold_s`` cancels it: a stumble is not a fall.

Keypoints under ``min_keypoint_score`` are not used; a person without a visible shoulder and hip only
keeps their track alive. All times are capture times.
"""

import math
from dataclasses import dataclass

from facestream.alerting.rules import tracking
from facestream.alerting.rules.rule import Rule
from facestream.alerting.rules.state import Where, alert, nowhere, seconds, sighting, to_ns, zoned
from facestream.config import check, setting
from facestream.schemas import Alert, Person, PoseEvent


@dataclass(frozen=True)
class FallSettings:
    min_person_score: float = setting(0.2, "Pose score a person needs to be followed.", minimum=0, maximum=1)
    min_keypoint_score: float = setting(0.2, "Score a shoulder or hip needs to be used.", minimum=0, maximum=1)
    upright_deg: float = setting(30.0, "Torso angle from vertical below which a person is upright.", minimum=0)
    down_deg: float = setting(60.0, "Torso angle from vertical from which a person is down.", minimum=0, maximum=180)
    impact_window_s: float = setting(
        1.0, "Seconds from the last upright frame within which the fall happens.", minimum=0
    )
    min_drop: float = setting(0.5, "How far the hips drop in a fall, in torso lengths.", minimum=0)
    hold_s: float = setting(2.0, "Seconds a person stays down after the impact before the alert.", minimum=0)
    recovery_s: float = setting(1.0, "Seconds upright again that end an alert.", minimum=0)
    update_every_s: float = setting(2.0, "Seconds between updates while the person stays down.", minimum=0)
    lost_after_s: float = setting(2.0, "Seconds unseen after which a person has left.", minimum=0)
    max_match_distance: float = setting(
        1.0, "How far a person may move between frames, in their box's longer side.", minimum=0
    )
    slow_descent_alerts: bool = setting(False, "Also alert when someone lies down slowly and stays down.")
    evidence: int = setting(5, "Frames an alert carries (the first ones down).", minimum=1, maximum=10)

    def __post_init__(self) -> None:
        check(self)
        if self.upright_deg >= self.down_deg:
            raise ValueError(f"upright_deg ({self.upright_deg}) must be below down_deg ({self.down_deg})")


@dataclass(frozen=True)
class Torso:
    angle_deg: float  # from vertical: 0 upright, 90 lying, 180 upside down
    hip_y: float  # frame pixels, growing downwards
    length: float  # frame pixels


def torso(person: Person, min_score: float) -> Torso | None:
    """The person's torso from the visible shoulders and hips (one of each at least), or None."""
    shoulders = [p for p in (person.point("left_shoulder"), person.point("right_shoulder")) if p[2] >= min_score]
    hips = [p for p in (person.point("left_hip"), person.point("right_hip")) if p[2] >= min_score]
    if not shoulders or not hips:
        return None
    sx, sy = (sum(p[0] for p in shoulders) / len(shoulders), sum(p[1] for p in shoulders) / len(shoulders))
    hx, hy = (sum(p[0] for p in hips) / len(hips), sum(p[1] for p in hips) / len(hips))
    length = math.hypot(sx - hx, sy - hy)
    if length < 1.0:
        return None
    return Torso(angle_deg=math.degrees(math.atan2(abs(sx - hx), hy - sy)), hip_y=hy, length=length)


def step(state: dict, event: PoseEvent, settings: FallSettings, where: Where = nowhere) -> list[Alert]:
    """Update ``state`` (this rule's part of a camera's state, JSON-able, changed in place) with one
    new event; return the alerts it causes. ``where`` names the zone of a person (its alert's)."""
    now = seconds(event)
    people = [p for p in event.persons if p.score >= settings.min_person_score]
    tracks, gone = tracking.step(
        state.setdefault("tracks", []),
        [p.box for p in people],
        now,
        settings.max_match_distance,
        settings.lost_after_s,
    )
    alerts = [
        alert("fall", t["fall"], event, "end", 1, to_ns(t["seen"] + settings.lost_after_s))
        for t in gone
        if t.get("fall", {}).get("phase") == "fallen"
    ]
    for person, track in zip(people, tracks, strict=True):
        measured = torso(person, settings.min_keypoint_score)
        if measured is not None:
            fall = track.setdefault("fall", {"phase": "up"})
            alerts += _person_step(fall, track, person, measured, event, settings, where)
    return alerts


def _person_step(
    fall: dict, track: dict, person: Person, measured: Torso, event: PoseEvent, settings: FallSettings, where: Where
) -> list[Alert]:
    now = seconds(event)
    upright, down = measured.angle_deg < settings.upright_deg, measured.angle_deg >= settings.down_deg
    phase = fall["phase"]
    if upright:
        fall["baseline"] = [now, measured.hip_y, measured.length]
        if phase == "fallen":
            fall.setdefault("up_since", now)
            if now - fall["up_since"] >= settings.recovery_s:
                fall["phase"] = "up"
                return [alert("fall", fall, event, "end", 1, to_ns(fall["up_since"] + settings.recovery_s))]
            return []
        fall["phase"] = "up"  # a bend, a squat, a stumble: over before it held
        return []
    fall.pop("up_since", None)
    if phase in ("up", "lying") and down:
        if _impact(fall.get("baseline"), measured, now, settings) or settings.slow_descent_alerts:
            fall.update(
                phase="impact",
                since=now,
                first=f"{event.event_id}/{track['id']}",
                started=event.capture_ts_ns,
                evidence=[],
            )
            fall.pop("zone", None)
            zoned(fall, where(person.box))
        else:
            fall["phase"] = "lying"  # got there slowly (or was never seen upright): not a fall
    if fall["phase"] not in ("impact", "fallen"):
        return []
    if len(fall["evidence"]) < settings.evidence:
        fall["evidence"].append(sighting(event, person.box, score=person.score))
    if fall["phase"] == "impact":
        if now - fall["since"] < settings.hold_s:
            return []
        fall.update(phase="fallen", updated=now)
        return [alert("fall", fall, event, "new", 1)]
    if now - fall["updated"] >= settings.update_every_s:
        fall["updated"] = now
        return [alert("fall", fall, event, "update", 1)]
    return []


def close(state: dict, event: PoseEvent, reason: str) -> list[Alert]:
    """End every open fall alert now and forget the tracks (the camera stopped running the rule)."""
    tracks = state.pop("tracks", [])
    fallen = [t["fall"] for t in tracks if t.get("fall", {}).get("phase") == "fallen"]
    return [alert("fall", fall, event, "end", 1, event.capture_ts_ns, reason) for fall in fallen]


def _impact(baseline: list | None, measured: Torso, now: float, settings: FallSettings) -> bool:
    """Down fast enough, and far enough below where the hips were when last upright."""
    if baseline is None:
        return False
    when, hip_y, length = baseline
    return now - when <= settings.impact_window_s and measured.hip_y - hip_y >= settings.min_drop * length


RULE = Rule(
    name="fall",
    title="Fall",
    summary="a person's torso turned and held near the ground (pose events)",
    settings=FallSettings,
    example='{"hold_s": 3}',
    sees="people",
    step=lambda state, seen, context, where: step(state, seen, context.settings.of(FallSettings), where),
    close=close,
)
