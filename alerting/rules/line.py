"""The line rule: a tracked person (or face) crossing one of the camera's named lines is an alert.

People come from the pose events (``follows = "people"``, the default) or faces from the detection
events, followed from frame to frame by ``tracking`` (under ``min_score`` they are not followed). A
person is where they stand (the middle of their box's bottom edge), a face at its box's centre. When
that point's step from one frame to the next crosses a line (``zones.crossing``: forward or backward,
as the line is drawn) in a direction ``direction`` counts, the crossing is one alert: a ``new`` and
its ``end`` in the same moment, naming the line (``zone``) and the direction (``reason``), with the
frame as evidence. A track seen for the first time has no step yet, so nobody is counted for standing
on a line when the camera starts; a person hidden longer than ``lost_after_s`` comes back as a new
track, and two who cross each other can swap tracks (``tracking`` says why).
"""

from dataclasses import dataclass

from facestream.alerting.rules import tracking
from facestream.alerting.rules.rule import Rule
from facestream.alerting.rules.state import FrameEvent, alert, seconds, sighting
from facestream.config import check, setting
from facestream.schemas import Alert, DetectionEvent
from facestream.zones import Line, crossing

FOLLOWS = ("people", "faces")
DIRECTIONS = ("both", "forward", "backward")


@dataclass(frozen=True)
class LineSettings:
    follows: str = setting(
        "people", "What is followed: people (pose events) or faces (detection events).", choices=FOLLOWS
    )
    direction: str = setting(
        "both",
        "Crossings that count: forward (for a line drawn top to bottom, left to right), backward, or both.",
        choices=DIRECTIONS,
    )
    min_score: float = setting(0.2, "Score a person or face needs to be followed.", minimum=0, maximum=1)
    lost_after_s: float = setting(2.0, "Seconds unseen after which a track is gone.", minimum=0)
    max_match_distance: float = setting(
        1.0, "How far a person or face may move between frames, in their box's longer side.", minimum=0
    )

    def __post_init__(self) -> None:
        check(self)


def step(state: dict, event: FrameEvent, settings: LineSettings, lines: dict[str, Line]) -> list[Alert]:
    """Update ``state`` (this rule's part of a camera's state, JSON-able, changed in place) with one
    new event; return an alert (new and end) for each crossing of one of ``lines``."""
    faces = isinstance(event, DetectionEvent)
    seen: tuple = event.faces if isinstance(event, DetectionEvent) else event.persons
    things = [t for t in seen if t.score >= settings.min_score]
    tracks, _gone = tracking.step(
        state.setdefault("tracks", []),
        [t.box for t in things],
        seconds(event),
        settings.max_match_distance,
        settings.lost_after_s,
    )
    alerts = []
    for thing, track in zip(things, tracks, strict=True):
        x0, y0, x1, y1 = thing.box
        at = [(x0 + x1) / 2 / event.width, ((y0 + y1) / 2 if faces else y1) / event.height]
        before, track["at"] = track.get("at"), at
        if before is None:
            continue
        for name, line in lines.items():
            way = crossing(line, (before[0], before[1]), (at[0], at[1]))
            if way == 0 or settings.direction not in ("both", "forward" if way > 0 else "backward"):
                continue
            crossed = {
                "first": f"{event.event_id}/{track['id']}@{name}",
                "started": event.capture_ts_ns,
                "evidence": [sighting(event, thing.box, score=thing.score)],
                "zone": name,
            }
            said = f"crossed {name} {'forward' if way > 0 else 'backward'}"
            alerts += [
                alert("line", crossed, event, "new", 1, reason=said),
                alert("line", crossed, event, "end", 1, event.capture_ts_ns, said),
            ]
    return alerts


def close(state: dict, _event: FrameEvent, _reason: str) -> list[Alert]:
    """Forget the tracks (the camera stopped running the rule); a crossing leaves nothing open."""
    state.pop("tracks", None)
    return []


RULE = Rule(
    name="line",
    title="Line",
    summary="a face or person crossing one of the camera's lines",
    settings=LineSettings,
    example='{"direction": "forward"}',
    sees="followed",
    step=lambda state, seen, context, _where: step(
        state, seen, context.settings.of(LineSettings), context.settings.lines
    ),
    close=close,
    default=False,
)
