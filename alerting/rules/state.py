"""What every rule shares: a camera's state as plain data (it lives in a changelog-backed table), event
time in seconds, duplicate events skipped, and sightings as alerts carry them."""

import base64
from collections.abc import Callable

import numpy as np

from facestream.schemas import Alert, DetectionEvent, PoseEvent, Sighting, alert_id_for

NS = 1_000_000_000
FrameEvent = DetectionEvent | PoseEvent  # what the rules read: one event per processed frame
Where = Callable[[tuple | list], str | None]  # a box in frame pixels -> the zone it is in (zones.zone_of)
TrackOf = Callable[[object], str | None]  # a face of the event -> the name of its track (face_tracks), if any
# A face of the event -> whether its embedding is its detector track's, lent (schemas.tracks), and has
# voted already: such a face is a sighting under its track's name but no new evidence of who it is.
Lent = Callable[[object], bool]


def nowhere(_box: tuple | list) -> str | None:
    """The Where of a rule that sees the whole frame: no zone to name."""
    return None


def untracked(_face: object) -> str | None:
    """The TrackOf of a camera whose faces are not followed: no track to name."""
    return None


def own(_face: object) -> bool:
    """The Lent of an event whose faces carry their own embeddings."""
    return False


def zoned(tracked: dict, zone: str | None) -> dict:
    """``tracked`` naming ``zone`` (its alerts' ``zone``), if there is one."""
    if zone is not None:
        tracked["zone"] = zone
    return tracked


def pack_vector(vector: np.ndarray) -> str:
    """A face vector as it is written in table state: float16 bytes in base64 (344 characters for
    128 values, against about 2,500 as a JSON list)."""
    return base64.b64encode(vector.astype("<f2").tobytes()).decode()


def unpack_vector(text: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text), "<f2").astype(np.float32)


def vector_of(tracked: dict) -> np.ndarray:
    """A tracked face's ``vector``. The rules keep it as a float32 vector while the worker holds the
    state (updated on every sighting); the table writes it packed (``written``), and a state read
    back from the changelog holds that text until first used."""
    vector = tracked["vector"]
    if isinstance(vector, str):
        vector = tracked["vector"] = unpack_vector(vector)
    return vector


def written(value: object) -> str:
    """What the table writes for a value of rule state that JSON has no form for: a face vector packed."""
    if isinstance(value, np.ndarray):
        return pack_vector(value)
    raise TypeError(f"rule state cannot hold a {type(value).__name__}")


def seconds(event: FrameEvent) -> float:
    """Event time: the frame's capture time, never when the event arrived."""
    return event.capture_ts_ns / NS


def is_new(camera: dict, event: FrameEvent) -> bool:
    """True once per frame: an event at or before the last frame this state (a camera's, for one
    stream of events) has seen is a duplicate (at-least-once delivery) or a replay, and must change
    nothing. Marks it seen."""
    last = camera.get("last_seq")
    if last is not None and event.frame_seq <= last:
        return False
    camera["last_seq"] = event.frame_seq
    return True


def sighting(
    event: FrameEvent, box=None, similarity: float | None = None, score: float = 0.0, track: str | None = None
) -> list:
    """A sighting as table state: [event_id, frame_seq, capture_ts_ns, box or None, similarity or None,
    score], and the face's track when it has one."""
    stored = [
        event.event_id,
        event.frame_seq,
        event.capture_ts_ns,
        None if box is None else list(box),
        None if similarity is None else round(similarity, 4),
        score,
    ]
    return stored if track is None else [*stored, track]


def face_counts(face, min_score: float, min_face_px: float) -> bool:
    """A face is worth a rule's attention: confident enough, and large enough to recognise."""
    x0, y0, x1, y1 = face.box
    return face.score >= min_score and x1 - x0 >= min_face_px and y1 - y0 >= min_face_px


def sighted(tracked: dict, seen: list, now: float, window_s: float, sightings: int, evidence: int) -> None:
    """Count a sighting of a tracked face: its time, the window's latest capture times (no more than an
    alert needs) and the best evidence by detection score."""
    tracked["count"] += 1
    tracked["last"] = now
    tracked.setdefault("started", seen[2])
    recent = [t for t in tracked["seen"] if now - t <= window_s]
    tracked["seen"] = (recent + [now])[-sightings:]
    if len(tracked.get("evidence", [])) < evidence or seen[5] > tracked["evidence"][-1][5]:
        tracked["evidence"] = sorted([*tracked.get("evidence", []), seen], key=lambda s: -s[5])[:evidence]


def opened_or_updated(
    kind: str, tracked: dict, event: FrameEvent, now: float, sightings: int, update_every_s: float
) -> Alert | None:
    """A tracked face's ``new`` once seen ``sightings`` times in the window, then an ``update`` at most
    every ``update_every_s``; None in between."""
    if not tracked["open"]:
        if len(tracked["seen"]) < sightings:
            return None
        tracked["open"], tracked["updated"] = True, now
        return alert(kind, tracked, event, "new", tracked["count"])
    if now - tracked["updated"] >= update_every_s:
        tracked["updated"] = now
        return alert(kind, tracked, event, "update", tracked["count"])
    return None


def close_open(kind: str, tracked: list[dict], event: FrameEvent, reason: str) -> list[Alert]:
    """End every open alert of ``tracked`` now, with ``reason`` (the camera stopped running the rule)."""
    return [alert(kind, t, event, "end", t["count"], event.capture_ts_ns, reason) for t in tracked if t["open"]]


def to_ns(t: float) -> int:
    """Event time in seconds -> Unix nanoseconds."""
    return round(t * NS)


def _sighting(stored: list, person: str | None) -> Sighting:
    """A stored sighting, ``[event_id, frame_seq, capture_ts_ns, box, similarity, score, track?]``, as
    the alert's evidence: without a box it has no score either. A seventh element is a track only as
    text: the crowd rule keeps its face count (a number) there."""
    event_id, frame_seq, capture_ts_ns, box, similarity = stored[:5]
    track = stored[6] if len(stored) > 6 and isinstance(stored[6], str) else None
    if box is None:
        return Sighting(event_id, frame_seq, capture_ts_ns, None, similarity, None, person=person, track=track)
    return Sighting(event_id, frame_seq, capture_ts_ns, tuple(box), similarity, stored[5], person=person, track=track)


def alert(
    kind: str,
    tracked: dict,
    event: FrameEvent,
    record: str,
    count: int,
    ended_ns: int | None = None,
    reason: str | None = None,
) -> Alert:
    """One record (``new``, ``update`` or ``end``) of the alert ``tracked`` holds (its first event or
    face, its start and its evidence, as ``sighting`` made them, the person and zone it names, if any), as of
    ``event``; an ``end`` says when the condition ended (``ended_ns``, by the rule's own measure)."""
    if (record == "end") != (ended_ns is not None):
        raise ValueError("an end record, and only an end record, says when the alert ended")
    return Alert(
        alert_id=alert_id_for(event.camera_id, kind, tracked["first"]),
        kind=kind,
        state=record,
        camera_id=event.camera_id,
        started_ts_ns=tracked["started"],
        updated_ts_ns=event.capture_ts_ns,
        evidence=tuple(_sighting(stored, tracked.get("person")) for stored in tracked["evidence"]),
        count=count,
        ended_ts_ns=ended_ns,
        reason=reason,
        zone=tracked.get("zone"),
    )
