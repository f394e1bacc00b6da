"""One camera's rules together: each new event goes through every rule the camera runs, once.

Detection events and pose events of a camera are two streams of one camera state: each stream has
its own duplicate check (a frame has one event of each kind). A rule the camera does not run at an
event's capture time (its rules changed, or its schedule has ended) ends its open alerts at that
event, saying why, rather than leaving them open for good; it starts afresh when it runs again. A
rule limited to zones sees the event with only the faces (or people) in them.
"""

import numpy as np

from facestream.alerting.config import CameraSettings
from facestream.alerting.rules import crowd, fall, person_seen, stranger, zones
from facestream.alerting.rules.state import is_new
from facestream.gallery import Gallery
from facestream.schemas import Alert, DetectionEvent, ModelRef, PoseEvent


def on_event(camera: dict, event: DetectionEvent, gallery: Gallery, settings: CameraSettings) -> list[Alert] | None:
    """Update ``camera`` (its JSON-able state, changed in place) with ``event``; return the alerts, or
    None for a duplicate or replayed event, which changes nothing."""
    if not is_new(camera, event):
        return None
    alerts = []
    match = _once_per_face(gallery.best_match)  # the stranger and person_seen rules ask about the same faces
    steps = {
        "stranger": (lambda state, seen: stranger.step(state, seen, match, settings.stranger), stranger.close),
        "person_seen": (
            lambda state, seen: person_seen.step(state, seen, match, gallery.watched_name, settings.person_seen),
            person_seen.close,
        ),
        "crowd": (lambda state, seen: crowd.step(state, seen, settings.crowd), crowd.close),
    }
    for kind, (step, close) in steps.items():
        why = settings.off(kind, event.capture_ts_ns)
        if why is None:
            alerts += step(camera.setdefault(kind, {}), _seen(event, settings.where(kind)))
        elif kind in camera:
            alerts += close(camera.pop(kind), event, why)
    return alerts


def on_pose(camera: dict, event: PoseEvent, settings: CameraSettings) -> list[Alert] | None:
    """``on_event`` for a pose event: the fall rule, if the camera runs it."""
    state = camera.setdefault("fall", {})
    if not is_new(state, event):
        return None
    why = settings.off("fall", event.capture_ts_ns)
    if why is None:
        polygons = settings.where("fall")
        return fall.step(state, event if polygons is None else zones.people_in(event, polygons), settings.fall)
    return fall.close(state, event, why)


def _seen(event: DetectionEvent, polygons: list | None) -> DetectionEvent:
    """What a rule limited to ``polygons`` sees of ``event``: the faces in them (all: no zones)."""
    return event if polygons is None else zones.faces_in(event, polygons)


def _once_per_face(match: stranger.Match) -> stranger.Match:
    """``match``, asked once per face vector of an event however many rules ask."""
    found: dict[tuple[bytes, ModelRef], tuple[str | None, float]] = {}

    def cached(vector: np.ndarray, embedder: ModelRef) -> tuple[str | None, float]:
        key = (vector.tobytes(), embedder)
        if key not in found:
            found[key] = match(vector, embedder)
        return found[key]

    return cached
