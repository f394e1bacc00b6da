"""The loitering rule: someone who stays in one zone (or, without zones, in view) longer than
``dwell_s`` becomes one alert.

It follows faces (detection events, the default) or people (pose events, ``follows = "people"``)
from frame to frame with ``tracking``: a face or person with a score of ``min_score`` or more,
matched by box overlap, then by distance. A stay begins when a track is first seen in a zone: the
alert opens (``new``) once it has lasted ``dwell_s`` seconds of capture time, repeats as ``update``
at most every ``update_every_s`` seconds, and ends (``end``) when the track moves into another zone
(a stay there begins) or is unseen for ``lost_after_s`` seconds, which includes leaving the zones
(its end time: the last frame of the stay). Its count is the stay so far in whole seconds; its
evidence the stay's best frames by score, the first one always among them.

What the tracker can and cannot do (two people crossing can swap tracks, someone hidden longer than
``lost_after_s`` comes back as a new stay) is in ``tracking``; nothing here knows who anyone is.
"""

from dataclasses import dataclass

from facestream.alerting.rules import tracking
from facestream.alerting.rules.rule import Rule
from facestream.alerting.rules.state import FrameEvent, Where, alert, nowhere, seconds, sighting, zoned
from facestream.config import check, setting
from facestream.schemas import Alert, DetectionEvent

FOLLOWS = ("faces", "people")


@dataclass(frozen=True)
class LoiteringSettings:
    follows: str = setting(
        "faces", "What is followed: faces (detection events) or people (pose events).", choices=FOLLOWS
    )
    dwell_s: float = setting(30.0, "Seconds in one zone (or in view, without zones) that make loitering.", minimum=0)
    min_score: float = setting(0.6, "Score a face or person needs to be followed.", minimum=0, maximum=1)
    update_every_s: float = setting(10.0, "Seconds between updates while the stay goes on.", minimum=0)
    lost_after_s: float = setting(3.0, "Seconds unseen (or out of the zones) after which a stay is over.", minimum=0)
    max_match_distance: float = setting(
        1.0, "How far a face or person may move between frames, in their box's longer side.", minimum=0
    )
    evidence: int = setting(5, "Frames an alert carries (the first, then the best by score).", minimum=1, maximum=10)

    def __post_init__(self) -> None:
        check(self)


def step(state: dict, event: FrameEvent, settings: LoiteringSettings, where: Where = nowhere) -> list[Alert]:
    """Update ``state`` (this rule's part of a camera's state, JSON-able, changed in place) with one
    new event, already narrowed to the rule's zones; ``where`` names the zone of a box."""
    now = seconds(event)
    seen = event.faces if isinstance(event, DetectionEvent) else event.persons
    things = [t for t in seen if t.score >= settings.min_score]
    tracks, gone = tracking.step(
        state.setdefault("tracks", []), [t.box for t in things], now, settings.max_match_distance, settings.lost_after_s
    )
    alerts = [_ended(t["stay"], event) for t in gone if t["stay"]["open"]]
    for thing, track in zip(things, tracks, strict=True):
        zone = where(thing.box)
        stay = track.get("stay")
        if stay is not None and stay.get("zone") != zone:  # into another zone: that stay is over
            if stay["open"]:
                alerts.append(_ended(stay, event))
            stay = None
        if stay is None:
            first = f"{event.event_id}/{track['id']}" + ("" if zone is None else f"@{zone}")
            stay = track["stay"] = zoned(
                {"first": first, "started": event.capture_ts_ns, "since": now, "open": False, "evidence": []}, zone
            )
        stay["last"] = event.capture_ts_ns
        _keep(stay, sighting(event, thing.box, score=thing.score), settings.evidence)
        record = _record(stay, now, settings)
        if record is not None:
            alerts.append(alert("loitering", stay, event, record, _dwelt(stay)))
    return alerts


def close(state: dict, event: FrameEvent, reason: str) -> list[Alert]:
    """End every open stay's alert now and forget the tracks (the camera stopped running the rule)."""
    stays = [t["stay"] for t in state.pop("tracks", []) if t.get("stay", {}).get("open")]
    return [alert("loitering", s, event, "end", _dwelt(s), event.capture_ts_ns, reason) for s in stays]


def _record(stay: dict, now: float, settings: LoiteringSettings) -> str | None:
    """``new`` once the stay has lasted dwell_s, then ``update`` at most every update_every_s."""
    if not stay["open"]:
        if now - stay["since"] < settings.dwell_s:
            return None
        stay["open"], stay["updated"] = True, now
        return "new"
    if now - stay["updated"] >= settings.update_every_s:
        stay["updated"] = now
        return "update"
    return None


def _ended(stay: dict, event: FrameEvent) -> Alert:
    stay["open"] = False
    return alert("loitering", stay, event, "end", _dwelt(stay), stay["last"])


def _dwelt(stay: dict) -> int:
    """The stay's length up to its last frame, in whole seconds."""
    return int((stay["last"] - stay["started"]) / 1e9)


def _keep(stay: dict, seen: list, evidence: int) -> None:
    """The stay's first frame, then its best by score."""
    kept = stay["evidence"]
    if not kept:
        kept.append(seen)
    elif len(kept) < evidence or seen[5] > kept[-1][5]:
        stay["evidence"] = [kept[0], *sorted([*kept[1:], seen], key=lambda s: -s[5])[: evidence - 1]]


RULE = Rule(
    name="loitering",
    title="Loitering",
    summary="a face or person that stays in view (or in a zone) longer than a dwell time",
    settings=LoiteringSettings,
    example='{"dwell_s": 60}',
    sees="followed",
    step=lambda state, seen, context, where: step(state, seen, context.settings.of(LoiteringSettings), where),
    close=close,
    default=False,
)
