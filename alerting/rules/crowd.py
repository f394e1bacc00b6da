"""The crowd rule: many faces on one camera for a while become one alert.

Over the frames of the last ``window_s`` seconds, when at least ``min_faces`` faces (each with a
detection score of ``min_score`` or more) are in more than ``share`` of them (and there are at least
``min_frames`` frames), the crowd holds: a ``new`` alert opens, repeats as ``update`` at most every
``update_every_s`` seconds, and ends (``end``) once the crowd has not held for ``end_after_s``
seconds (its end time: the last frame that held plus ``end_after_s``). The alert carries the most
crowded frames of the window and of its life as evidence, and its count is the most faces seen at
once, in one of them. All times are capture times; the window is counted in quarter seconds.
"""

from dataclasses import dataclass
from operator import itemgetter

from facestream.alerting.rules.rule import Rule
from facestream.alerting.rules.state import alert, seconds, sighting, to_ns, zoned
from facestream.config import check, setting
from facestream.schemas import Alert, DetectionEvent

SLOTS_PER_S = 4  # the window's resolution


@dataclass(frozen=True)
class CrowdSettings:
    min_faces: int = setting(5, "Faces in one frame that make a crowd.", minimum=1)
    min_score: float = setting(0.6, "Detection score a face needs to count.", minimum=0, maximum=1)
    window_s: float = setting(5.0, "Seconds of capture time the crowd must hold over.", minimum=0)
    share: float = setting(
        0.5, "Share of the window's frames that must show the crowd (more than this).", minimum=0, maximum=1
    )
    min_frames: int = setting(3, "Frames the window needs before a crowd can hold.", minimum=1)
    update_every_s: float = setting(2.0, "Seconds between updates while the crowd holds.", minimum=0)
    end_after_s: float = setting(5.0, "Seconds after the crowd last held that the alert ends.", minimum=0)
    evidence: int = setting(5, "Frames an alert carries (those with the most faces).", minimum=1, maximum=10)

    def __post_init__(self) -> None:
        check(self)


def step(state: dict, event: DetectionEvent, settings: CrowdSettings, zone: str | None = None) -> list[Alert]:
    """Update ``state`` (this rule's part of a camera's state, or of one zone's, changed in place) with
    one new event (only the faces in ``zone``, if it counts in one, which its alerts name); return the
    alerts it causes."""
    now = seconds(event)
    faces = len([face for face in event.faces if face.score >= settings.min_score])
    # The window in quarter seconds: [slot, frames, crowded frames, most faces, that frame's sighting]
    # each, so the state stays a few entries at any frame rate (it is written after every batch).
    slot, oldest = int(now * SLOTS_PER_S), int((now - settings.window_s) * SLOTS_PER_S)
    slots = state.setdefault("slots", [])
    while slots and slots[0][0] < oldest:
        del slots[0]
    if not slots or slots[-1][0] != slot:
        slots.append([slot, 0, 0, -1, None])
    current = slots[-1]
    current[1] += 1
    current[2] += faces >= settings.min_faces
    if faces > current[3]:
        current[3:] = [faces, _seen(event, faces)]
    frames, crowded = sum(map(itemgetter(1), slots)), sum(map(itemgetter(2), slots))
    holds = frames >= settings.min_frames and crowded > settings.share * frames
    crowd = state.get("open")
    if holds:
        record = None
        if crowd is None:  # its evidence: the window's most crowded frames, so its count is one of theirs
            # Named by its first event and zone: crowds of two zones opened by one frame are two alerts.
            first = event.event_id if zone is None else f"{event.event_id}@{zone}"
            crowd = state["open"] = zoned({"first": first, "started": event.capture_ts_ns, "evidence": []}, zone)
            for best in (s[4] for s in slots if len(s) > 4 and s[4] is not None):
                _keep(crowd, best, settings)
            record = "new"
        elif now - crowd["updated"] >= settings.update_every_s:
            record = "update"
        crowd["held"] = now
        _keep(crowd, _seen(event, faces), settings)
        if record is None:
            return []
        crowd["updated"] = now
        return [alert("crowd", crowd, event, record, crowd["evidence"][0][6])]
    if crowd is not None and now - crowd["held"] >= settings.end_after_s:
        state["open"] = None
        ended = to_ns(crowd["held"] + settings.end_after_s)
        return [alert("crowd", crowd, event, "end", crowd["evidence"][0][6], ended_ns=ended)]
    return []


def close(state: dict, event: DetectionEvent, reason: str) -> list[Alert]:
    """End the open crowd alert, if any, now (the camera stopped running the rule)."""
    crowd = state.get("open")
    if crowd is None:
        return []
    state["open"] = None
    return [alert("crowd", crowd, event, "end", crowd["evidence"][0][6], event.capture_ts_ns, reason)]


def _seen(event: DetectionEvent, faces: int) -> list:
    """A frame as crowd evidence: its sighting with the face count last (evidence keeps the most crowded)."""
    return sighting(event) + [faces]


def _keep(crowd: dict, seen: list, settings: CrowdSettings) -> None:
    """Add a frame to the evidence if it is among the most crowded (once per frame)."""
    if all(kept[0] != seen[0] for kept in crowd["evidence"]):
        crowd["evidence"] = sorted([*crowd["evidence"], seen], key=lambda s: -s[6])[: settings.evidence]


RULE = Rule(
    name="crowd",
    title="Crowd",
    summary="many faces in most frames of a few seconds (counted in each of its zones apart)",
    settings=CrowdSettings,
    example='{"min_faces": 3}',
    sees="faces",
    # Counted zone by zone: every face it sees is in the one zone ``where`` names.
    step=lambda state, seen, context, where: step(state, seen, context.settings.of(CrowdSettings), where(())),
    close=close,
    per_zone=True,
)
