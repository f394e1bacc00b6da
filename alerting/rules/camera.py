"""One camera's rules together: each new event goes through every rule the camera runs, once.

Detection events and pose events of a camera are two streams of one camera state: each stream has
its own duplicate check (a frame has one event of each kind). A rule the camera does not run at an
event's capture time (its rules changed, or its schedule has ended) ends its open alerts at that
event, saying why, rather than leaving them open for good; it starts afresh when it runs again. A
rule limited to zones sees the event with only the faces (or people) in them, and is told which zone
each is in.
"""

from collections.abc import Callable
from typing import Any

from facestream.alerting.config import CameraSettings
from facestream.alerting.rules import crowd, fall, line, loitering, person_seen, stranger, zones
from facestream.alerting.rules.recognition import Match, Recognition
from facestream.alerting.rules.state import FrameEvent, Where, is_new, nowhere
from facestream.gallery import Gallery
from facestream.schemas import Alert, DetectionEvent, PoseEvent

# The event a step or close takes is of the rule's own kind (DetectionEvent for face rules, PoseEvent for
# fall, either for loitering and line); zones narrow it without changing its kind, hence Any.
Step = Callable[[dict, Any, Where], list[Alert]]  # (rule state, what it sees, zone of a box) -> alerts
Close = Callable[[dict, Any, str], list[Alert]]  # (rule state, event, why) -> the ends of its open alerts


def on_event(
    camera: dict,
    event: DetectionEvent,
    gallery: Gallery,
    settings: CameraSettings,
    match: Match | None = None,
) -> list[Alert] | None:
    """Update ``camera`` (its state, changed in place) with ``event``; return the alerts, or
    None for a duplicate or replayed event, which changes nothing. ``match`` says who the event's faces
    are (the worker's ``Recognition`` of the whole batch); by default the gallery is asked about this event."""
    if not is_new(camera, event):
        return None
    match = match or Recognition(gallery, [event])
    alerts = _rule(
        camera,
        "stranger",
        event,
        settings,
        lambda state, seen, where: stranger.step(state, seen, match, settings.stranger, where),
        stranger.close,
    )
    alerts += _rule(
        camera,
        "person_seen",
        event,
        settings,
        lambda state, seen, where: person_seen.step(
            state, seen, match, gallery.watched_name, settings.person_seen, where
        ),
        person_seen.close,
    )
    alerts += _followed(camera, event, settings, "faces")
    return alerts + _crowds(camera, event, settings)


def on_pose(camera: dict, event: PoseEvent, settings: CameraSettings) -> list[Alert] | None:
    """``on_event`` for a pose event: the fall rule, and loitering and line when they follow people."""
    if not is_new(camera.setdefault("poses", {}), event):
        return None
    alerts = _rule(
        camera,
        "fall",
        event,
        settings,
        lambda state, seen, where: fall.step(state, seen, settings.fall, where),
        fall.close,
    )
    return alerts + _followed(camera, event, settings, "people")


def _followed(camera: dict, event: FrameEvent, settings: CameraSettings, things: str) -> list[Alert]:
    """The rules that follow faces or people across frames (loitering, line), where they follow ``things``."""
    alerts = []
    if settings.loitering.follows == things:
        alerts += _rule(
            camera,
            "loitering",
            event,
            settings,
            lambda state, seen, where: loitering.step(state, seen, settings.loitering, where),
            loitering.close,
        )
    if settings.line.follows == things:
        alerts += _rule(
            camera,
            "line",
            event,
            settings,
            lambda state, seen, _where: line.step(state, seen, settings.line, settings.lines),
            line.close,
        )
    return alerts


def _rule(
    camera: dict, kind: str, event: FrameEvent, settings: CameraSettings, step: Step, close: Close
) -> list[Alert]:
    """Run one rule on ``event`` (narrowed to its zones, if it has any), or, if the camera does not run
    it now, end its open alerts."""
    why = settings.off(kind, event.capture_ts_ns)
    if why is not None:
        return close(camera.pop(kind), event, why) if kind in camera else []
    limits = settings.where(kind)
    if limits is None:
        return step(camera.setdefault(kind, {}), event, nowhere)
    seen: FrameEvent
    if isinstance(event, PoseEvent):
        seen, where = zones.people_in(event, limits), zones.zone_of(limits, event, zones.feet_point)
    else:
        seen, where = zones.faces_in(event, limits), zones.zone_of(limits, event, zones.face_point)
    return step(camera.setdefault(kind, {}), seen, where)


def _crowds(camera: dict, event: DetectionEvent, settings: CameraSettings) -> list[Alert]:
    """The crowd rule: over the whole frame (state ``crowd``), or counted in each of its zones on its
    own (state ``crowd@<zone>``: one crowd alert per zone, naming it)."""
    limits = settings.where("crowd")
    areas = (
        {"crowd": (event, None)}
        if limits is None
        else {f"crowd@{name}": (zones.faces_in(event, {name: polygon}), name) for name, polygon in limits.items()}
    )
    why = settings.off("crowd", event.capture_ts_ns)
    alerts = []
    for key in [k for k in camera if k.split("@")[0] == "crowd" and (why is not None or k not in areas)]:
        alerts += crowd.close(camera.pop(key), event, why or "the crowd rule no longer counts in this zone")
    if why is None:
        for key, (seen, zone) in areas.items():
            alerts += crowd.step(camera.setdefault(key, {}), seen, settings.crowd, zone)
    return alerts
