"""The person_seen rule: someone on the watchlist (an enrolled person marked watched in the gallery)
seen on a camera becomes one alert per visit, naming them; the stranger rule's inverse.

A face counts when its detection score and size pass the minimums, it carries an embedding, and its
best match in the gallery reaches ``match_threshold`` and is watched. On a camera whose faces are
followed (``face_tracks``), who a face is is its track's name, decided by a vote over the track's good
faces (``votes``), so one frame's close match to someone else names nobody. Seen in ``sightings``
frames within ``window_s`` seconds it opens an alert (``new``), repeated as ``update`` at most every
``update_every_s`` seconds while seen, and ended (``end``) after ``end_after_s`` seconds unseen (its
end time: the last sighting plus ``end_after_s``). A person who comes back after that is a new visit
and a new alert, never nothing (the notifier's cooldown decides what is sent). All times are the
frames' capture times.
"""

from collections.abc import Callable
from dataclasses import dataclass

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
    zoned,
)
from facestream.config import check, setting
from facestream.schemas import Alert, DetectionEvent

Watched = Callable[[str], str | None]  # person id -> the name, if the person is watched (Gallery.watched_name)


@dataclass(frozen=True)
class PersonSeenSettings:
    match_threshold: float = setting(
        0.5,
        "Cosine similarity to a watched person's enrolled faces at or above which a face is them.",
        minimum=-1,
        maximum=1,
    )
    min_score: float = setting(0.8, "Detection score a face needs to count.", minimum=0, maximum=1)
    min_face_px: float = setting(40.0, "Shorter side of a face's box, in frame pixels, for it to count.", minimum=0)
    sightings: int = setting(2, "Frames within window-s that open an alert.", minimum=1)
    window_s: float = setting(5.0, "Seconds of capture time the sightings must fall in.", minimum=0)
    update_every_s: float = setting(10.0, "Seconds between updates while the person is seen.", minimum=0)
    end_after_s: float = setting(10.0, "Seconds unseen after which the alert ends.", minimum=0)
    evidence: int = setting(
        5, "Sightings an alert carries (those with the highest detection scores).", minimum=1, maximum=10
    )

    def __post_init__(self) -> None:
        check(self)


def step(
    state: dict,
    event: DetectionEvent,
    match: Match,
    watched: Watched,
    settings: PersonSeenSettings,
    where: Where = nowhere,
    track_of: TrackOf = untracked,
    followed: bool = False,
    gallery: int = 0,
    lent: Lent = own,
) -> list[Alert]:
    """Update ``state`` (this rule's part of a camera's state, JSON-able, changed in place) with one
    new event; return the alerts it causes. ``where`` names the zone of a face (its alert's),
    ``track_of`` its track (its sighting's); ``followed``: the camera follows its faces, so a face is
    who its track was voted to be (a face with no track counts not), against the gallery as of its
    change number ``gallery``."""
    now = seconds(event)
    people: dict[str, dict] = state.setdefault("people", {})
    state.pop("cooldown", None)  # kept by versions that silenced a return
    alerts = []
    for key, tracked in list(people.items()):  # ends first, as the stranger rule's
        unseen = now - tracked["last"]
        if tracked["open"] and unseen >= settings.end_after_s:
            ended = to_ns(tracked["last"] + settings.end_after_s)
            alerts.append(alert("person_seen", tracked, event, "end", tracked["count"], ended))
            del people[key]
        elif not tracked["open"] and unseen > settings.window_s:
            del people[key]  # seen too seldom to alert: forget
    if event.embedder is not None:
        for index, face in enumerate(event.faces):
            if face.embedding is None or not face_counts(face, settings.min_score, settings.min_face_px):
                continue
            _vector, person_id, similarity = match(face.embedding, event.embedder)
            track = track_of(face)
            if followed:
                if track is None:
                    continue  # a faint face that continues no track
                person_id = votes.track_name(
                    state, track, face, person_id, similarity, settings, now, gallery, lent(face)
                )
            elif person_id is None or similarity < settings.match_threshold:
                continue
            if not person_id:
                continue  # nobody known, or a track not yet named
            name = watched(person_id)
            if name is None:
                continue
            person = people.get(person_id)
            if person is None:
                first = f"{event.event_id}#{index}"
                person = people[person_id] = {"first": first, "person": name, "open": False, "count": 0, "seen": []}
                zoned(person, where(face.box))
            if person.get("frame") == event.frame_seq:
                continue  # the same person twice in one frame (a reflection, a poster): one sighting
            person["frame"] = event.frame_seq
            seen = sighting(event, face.box, similarity, face.score, track)
            sighted(person, seen, now, settings.window_s, settings.sightings, settings.evidence)
            record = opened_or_updated("person_seen", person, event, now, settings.sightings, settings.update_every_s)
            if record is not None:
                alerts.append(record)
    return alerts


def close(state: dict, event: DetectionEvent, reason: str) -> list[Alert]:
    """End every open person_seen alert now (the camera stopped running the rule)."""
    return close_open("person_seen", list(state.pop("people", {}).values()), event, reason)


RULE = Rule(
    name="person_seen",
    title="Watchlist",
    summary="a person on the watchlist seen, named",
    settings=PersonSeenSettings,
    example='{"end_after_s": 30}',
    sees="faces",
    step=lambda state, seen, context, where: step(
        state,
        seen,
        context.match,
        context.gallery.watched_name,
        context.settings.of(PersonSeenSettings),
        where,
        context.track_of,
        context.followed,
        context.gallery.changes,
        context.voted_already,
    ),
    close=close,
    follows_faces=True,
)
