"""One camera's rules together: each new event goes through every rule the camera runs, once.

Detection events and pose events of a camera are two streams of one camera state: each stream has
its own duplicate check (a frame has one event of each kind). A rule the camera does not run at an
event's capture time (its rules changed, or its schedule has ended) ends its open alerts at that
event, saying why, rather than leaving them open for good; it starts afresh when it runs again. A
rule limited to zones sees the event with only the faces (or people) in them, and is told which zone
each is in. When the camera runs a rule that names face tracks (stranger, person_seen), its faces are
followed first, over the whole frame (``face_tracks``), and each rule is told each face's track.
A rule that fails on an event costs that rule's part of it: the others run, and ``RuleFailed`` brings
their alerts to the worker, which dead-letters the event.
"""

import logging

from facestream.alerting.rules import zones
from facestream.alerting.rules.camera_settings import CameraSettings
from facestream.alerting.rules.face_tracks import FaceTrackSettings, follow_faces
from facestream.alerting.rules.recognition import Match, Recognition
from facestream.alerting.rules.registry import REGISTRY
from facestream.alerting.rules.rule import Context, Rule
from facestream.alerting.rules.state import FrameEvent, Where, is_new, nowhere
from facestream.gallery import Gallery
from facestream.schemas import Alert, DetectionEvent, PoseEvent
from facestream.schemas.tracks import carry
from facestream.zones import Zones

log = logging.getLogger(__name__)


class RuleFailed(Exception):
    """Rules that failed on an event (named in the message), with the alerts the others made of it."""

    def __init__(self, failures: list[tuple[str, Exception]], alerts: list[Alert]) -> None:
        super().__init__("; ".join(f"the {name} rule: {type(exc).__name__}: {exc}" for name, exc in failures))
        self.alerts = alerts


def lend(camera: dict, event: DetectionEvent) -> tuple[DetectionEvent, tuple[int, ...]]:
    """``event`` with its faces that carry no embedding given their detector track's last (the camera's
    state ``carried``: ``schemas.tracks.carry``), and which faces were. Done for every event, a
    duplicate too: another replica's first events, replayed, hold the embeddings of its tracks."""
    return carry(camera.setdefault("carried", {}), event)


def on_event(
    camera: dict,
    event: DetectionEvent,
    gallery: Gallery,
    settings: CameraSettings,
    match: Match | None = None,
    lent: tuple[int, ...] | None = None,
) -> list[Alert] | None:
    """Update ``camera`` (its state, changed in place) with ``event``; return the alerts, or
    None for a duplicate or replayed event, which changes nothing but what its tracks' embeddings are.
    ``match`` says who the event's faces are (the worker's ``Recognition`` of the whole batch); by
    default the gallery is asked about this event. ``lent``: the event has been through ``lend``
    already (the worker lends a batch's faces before it matches them), these faces were given one."""
    if lent is None:
        event, lent = lend(camera, event)
    if not is_new(camera, event):
        return None
    match = match or Recognition(gallery, [event])
    tracks = _tracks(camera, event, match, settings, lent)
    voted = frozenset(id(event.faces[i]) for i in _voted(camera, event, lent)) if tracks else frozenset()
    return _rules(camera, event, Context(settings, match, gallery, tracks or {}, tracks is not None, voted), "faces")


def _voted(camera: dict, event: DetectionEvent, lent: tuple[int, ...]) -> list[int]:
    """The faces of a followed frame whose embedding has voted on its track's name already: faces lent
    their detector track's embedding, where that embedding reached a followed frame before. Faces are
    followed a few times a second (``face_tracks``' rate) and a detector embeds a track's face now and
    then, in any frame: an embedding made between followed frames votes at the next one, once. (State
    ``voted``: detector track -> capture time of the embedding that voted last.)"""
    made = camera.get("carried", {}).get("tracks", {})  # track -> [embedding, its frame's capture time, ...]
    voted: dict[str, int] = camera.setdefault("voted", {})
    for name in [name for name in voted if name not in made]:
        del voted[name]
    already = []
    for index, face in enumerate(event.faces):
        name = str(face.track)
        if face.track is None or name not in made:
            continue
        if index in lent and voted.get(name) == made[name][1]:
            already.append(index)
        voted[name] = made[name][1]
    return already


def _tracks(
    camera: dict, event: DetectionEvent, match: Match, settings: CameraSettings, lent: tuple[int, ...]
) -> dict[int, str] | None:
    """Each face's track (by the face's id), when the camera runs a rule that names them: the camera's
    face tracks (state ``face_tracks``) follow the event first, over the whole frame, faces ``lent``
    their detector track's embedding keeping the track the detector's track had. None where the
    camera does not follow its faces; none of them has a track in a frame between those followed."""
    if not settings.names_tracks:
        camera.pop("face_tracks", None)  # no rule names tracks now: a later one starts afresh
        return None
    found = follow_faces(camera.setdefault("face_tracks", {}), event, match, settings.of(FaceTrackSettings), lent)
    if found is None:  # a frame between those followed: its faces count for no rule that names tracks
        return {}
    return {id(face): name for face, name in zip(event.faces, found[0]) if name is not None}


def on_pose(
    camera: dict, event: PoseEvent, settings: CameraSettings, gallery: Gallery | None = None
) -> list[Alert] | None:
    """``on_event`` for a pose event: the rules that read people (fall, and loitering and line when
    they follow people)."""
    if not is_new(camera.setdefault("poses", {}), event):
        return None
    known = gallery or Gallery()
    return _rules(camera, event, Context(settings, Recognition(known, []), known), "people")


def _rules(camera: dict, event: FrameEvent, context: Context, things: str) -> list[Alert]:
    """Every rule of the registry that reads ``things`` (faces or people) on this camera, in order."""
    alerts: list[Alert] = []
    failures: list[tuple[str, Exception]] = []
    for rule in REGISTRY:
        if rule.sees == things or (rule.sees == "followed" and context.settings.of(rule.settings).follows == things):
            try:
                alerts += (
                    _per_zone(camera, rule, event, context) if rule.per_zone else _rule(camera, rule, event, context)
                )
            except Exception as exc:  # a rule's mistake: its part of the event is lost, loudly
                log.exception("the %s rule failed on event %s of camera %s", rule.name, event.event_id, event.camera_id)
                failures.append((rule.name, exc))
    if failures:
        raise RuleFailed(failures, alerts)
    return alerts


def _rule(camera: dict, rule: Rule, event: FrameEvent, context: Context) -> list[Alert]:
    """Run one rule on ``event`` (narrowed to its zones, if it has any), or, if the camera does not run
    it now, end its open alerts."""
    assert rule.step is not None and rule.close is not None  # rules that read frames have both
    why = context.settings.off(rule.name, event.capture_ts_ns)
    if why is not None:
        return rule.close(camera.pop(rule.name), event, why) if rule.name in camera else []
    limits = context.settings.where(rule.name)
    if limits is None:
        return rule.step(camera.setdefault(rule.name, {}), event, context, nowhere)
    seen, where = _zoned(event, limits)
    return rule.step(camera.setdefault(rule.name, {}), seen, context, where)


def _per_zone(camera: dict, rule: Rule, event: FrameEvent, context: Context) -> list[Alert]:
    """A rule that counts over the whole frame (state ``<rule>``) or in each of its zones on its own
    (state ``<rule>@<zone>``: one alert per zone, naming it), e.g. crowd."""
    assert rule.step is not None and rule.close is not None
    limits = context.settings.where(rule.name)
    areas: dict[str, tuple[FrameEvent, Where]] = (
        {rule.name: (event, nowhere)}
        if limits is None
        else {
            f"{rule.name}@{name}": (_zoned(event, {name: polygon})[0], _named(name)) for name, polygon in limits.items()
        }
    )
    why = context.settings.off(rule.name, event.capture_ts_ns)
    alerts = []
    for key in [k for k in camera if k.split("@")[0] == rule.name and (why is not None or k not in areas)]:
        alerts += rule.close(camera.pop(key), event, why or f"the {rule.name} rule no longer counts in this zone")
    if why is None:
        for key, (seen, where) in areas.items():
            alerts += rule.step(camera.setdefault(key, {}), seen, context, where)
    return alerts


def _zoned(event: FrameEvent, limits: Zones) -> tuple[FrameEvent, Where]:
    """The event with only the faces (or people, by their feet) in ``limits``, and the zone of a box."""
    if isinstance(event, PoseEvent):
        return zones.people_in(event, limits), zones.zone_of(limits, event, zones.feet_point)
    return zones.faces_in(event, limits), zones.zone_of(limits, event, zones.face_point)


def _named(zone: str) -> Where:
    """The Where of a rule counting in one zone: every box it sees is in it."""
    return lambda _box: zone
