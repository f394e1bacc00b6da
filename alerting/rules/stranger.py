"""The stranger rule: an unknown face seen again and again on one camera becomes one alert per visit.

A face counts when its detection score and size pass the minimums and it carries an embedding. If
its best cosine similarity to the gallery reaches ``match_threshold`` it is a known person and never
alerts. On a camera whose faces are followed (``face_tracks``), a stranger is a track: its name is
decided by a vote over its good faces (``votes``), so a track named as a known person never alerts and
one person in view is one alert, however their faces match frame by frame. Otherwise a face joins the
camera's stranger whose face it resembles most (``same_stranger`` or more), or starts a new one. A
stranger seen in ``sightings`` frames within ``window_s`` seconds opens an alert (``new``), which
repeats as ``update`` at most every ``update_every_s`` seconds while seen, and ends (``end``) after
``end_after_s`` seconds unseen (its end time: the last sighting plus ``end_after_s``, reported with
the camera's next event). A stranger who comes back after that is a new visit and a new alert: a
return is never silent (the notifier's cooldown decides what is sent, not this rule). Each record
carries the stranger's face (the mean of its faces' embeddings) when its event names the embedder, so
that the alert store can tell the same stranger on another visit or camera (``alertdb.strangers``).
All times are the frames' capture times.
"""

import math
from dataclasses import dataclass, replace

import numpy as np

from facestream.alerting.rules import votes
from facestream.alerting.rules.recognition import Match
from facestream.alerting.rules.rule import Rule
from facestream.alerting.rules.state import (
    Lent,
    TrackOf,
    Where,
    alert,
    close_open,
    face_counts,
    nowhere,
    opened_or_updated,
    own,
    seconds,
    sighted,
    sighting,
    to_ns,
    untracked,
    vector_of,
    zoned,
)
from facestream.config import check, setting
from facestream.schemas import Alert, DetectionEvent, ModelRef


@dataclass(frozen=True)
class StrangerSettings:
    match_threshold: float = setting(
        0.5, "Cosine similarity to the gallery at or above which a face is a known person.", minimum=-1, maximum=1
    )
    same_stranger: float = setting(
        0.5, "Cosine similarity to a stranger's face at or above which a face is that stranger.", minimum=-1, maximum=1
    )
    min_score: float = setting(0.8, "Detection score a face needs to count.", minimum=0, maximum=1)
    min_face_px: float = setting(40.0, "Shorter side of a face's box, in frame pixels, for it to count.", minimum=0)
    sightings: int = setting(3, "Frames within window-s that open an alert.", minimum=1)
    window_s: float = setting(5.0, "Seconds of capture time the sightings must fall in.", minimum=0)
    update_every_s: float = setting(2.0, "Seconds between updates while the stranger is seen.", minimum=0)
    end_after_s: float = setting(5.0, "Seconds unseen after which the alert ends.", minimum=0)
    evidence: int = setting(
        5, "Sightings an alert carries (those with the highest detection scores).", minimum=1, maximum=10
    )

    def __post_init__(self) -> None:
        check(self)


def step(
    state: dict,
    event: DetectionEvent,
    match: Match,
    settings: StrangerSettings,
    where: Where = nowhere,
    track_of: TrackOf = untracked,
    followed: bool = False,
    gallery: int = 0,
    lent: Lent = own,
) -> list[Alert]:
    """Update ``state`` (this rule's part of a camera's state, changed in place; JSON-able but for the
    face vectors, which the table packs: ``state.written``) with one new event; return the alerts it
    causes. ``where`` names the zone of a face (its alert's), ``track_of`` its track (its sighting's);
    ``followed``: the camera follows its faces, so strangers are tracks (a face with none counts not),
    named against the gallery as of its change number ``gallery``; a face ``lent`` its detector track's
    embedding, where that embedding has voted already, counts as a sighting but casts no vote."""
    now = seconds(event)
    state.pop("cooldown", None)  # kept by versions that silenced a return
    alerts = []
    # Ends first: a stranger unseen for end_after_s is gone, even if this very frame shows the face
    # again (that is a new visit, and a new alert). (A new list, not list.remove: that compares the
    # strangers' dicts, vectors and all.)
    strangers: list[dict] = []
    for tracked in state.get("strangers", []):
        unseen = now - tracked["last"]
        if tracked["open"] and unseen >= settings.end_after_s:
            ended = to_ns(tracked["last"] + settings.end_after_s)
            alerts.append(_with_face(alert("stranger", tracked, event, "end", tracked["count"], ended), tracked, event))
        elif tracked["open"] or unseen <= settings.window_s:
            strangers.append(tracked)  # else seen too seldom to alert: forgotten
    state["strangers"] = strangers
    if event.embedder is not None:
        for index, face in enumerate(event.faces):
            if face.embedding is None or not face_counts(face, settings.min_score, settings.min_face_px):
                continue
            vector, person, similarity = match(face.embedding, event.embedder)
            track = track_of(face)
            if followed:
                if track is None:
                    continue  # a faint face that continues no track
                named = votes.track_name(state, track, face, person, similarity, settings, now, gallery, lent(face))
                if named != votes.UNKNOWN:
                    continue  # no good face yet, or the track is someone known
                stranger = next((s for s in strangers if s.get("track") == track), None)
            elif similarity >= settings.match_threshold:
                continue  # a known person
            else:
                stranger = _closest(strangers, vector, settings.same_stranger)
            if stranger is None:
                # Named by the event and the face that first showed it: two strangers first seen in one
                # frame are two alerts, and a replay names them the same again.
                first = f"{event.event_id}#{index}"
                stranger = {"vector": vector.copy(), "first": first, "open": False, "count": 0, "seen": []}
                if followed:
                    stranger["track"] = track
                zoned(stranger, where(face.box))
                strangers.append(stranger)
            seen = sighting(event, face.box, similarity, face.score, track)
            _sighted(stranger, vector, seen, now, settings)
            record = opened_or_updated("stranger", stranger, event, now, settings.sightings, settings.update_every_s)
            if record is not None:
                alerts.append(_with_face(record, stranger, event))
    return alerts


def close(state: dict, event: DetectionEvent, reason: str) -> list[Alert]:
    """End every open stranger alert now (the camera stopped running the rule)."""
    opened = [s for s in state.pop("strangers", []) if s["open"]]
    return [_with_face(record, s, event) for record, s in zip(close_open("stranger", opened, event, reason), opened)]


def _with_face(record: Alert, stranger: dict, event: DetectionEvent) -> Alert:
    """``record`` carrying the stranger's face, if ``event`` says which embedder made it."""
    embedder: ModelRef | None = event.embedder
    if embedder is None:
        return record
    return replace(record, face=vector_of(stranger).astype("<f2").tobytes(), embedder=embedder)


def _closest(candidates: list[dict], vector: np.ndarray, threshold: float) -> dict | None:
    if not candidates:
        return None
    similarities = np.array([vector_of(c) for c in candidates]) @ vector
    best = int(similarities.argmax())
    return candidates[best] if similarities[best] >= threshold else None


def _sighted(stranger: dict, vector: np.ndarray, seen: list, now: float, settings: StrangerSettings) -> None:
    """Count the sighting (``state.sighted``) and move the stranger's face towards this one."""
    sighted(stranger, seen, now, settings.window_s, settings.sightings, settings.evidence)
    mean = vector_of(stranger) * (stranger["count"] - 1) + vector
    mean /= max(math.sqrt(mean.dot(mean)), 1e-12)
    stranger["vector"] = mean


RULE = Rule(
    name="stranger",
    title="Stranger",
    summary="a face that matches nobody in the gallery, seen in several frames",
    settings=StrangerSettings,
    example='{"sightings": 2}',
    sees="faces",
    step=lambda state, seen, context, where: step(
        state,
        seen,
        context.match,
        context.settings.of(StrangerSettings),
        where,
        context.track_of,
        context.followed,
        context.gallery.changes,
        context.voted_already,
    ),
    close=close,
    follows_faces=True,
)
