"""One camera's rules together: each new event goes through every rule the camera runs, once.

Detection events and pose events of a camera are two streams of one camera state: each stream has
its own duplicate check (a frame has one event of each kind). A rule the camera no longer runs (its
rules changed, the workers restarted) ends its open alerts at the camera's next event, saying why,
rather than leaving them open for good.
"""

import numpy as np

from facestream.alerting.config import CameraSettings
from facestream.alerting.rules import crowd, fall, person_seen, stranger
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
    if "stranger" in settings.rules:
        alerts += stranger.step(camera.setdefault("stranger", {}), event, match, settings.stranger)
    elif "stranger" in camera:
        alerts += stranger.close(camera.pop("stranger"), event, _off("stranger"))
    if "person_seen" in settings.rules:
        state = camera.setdefault("person_seen", {})
        alerts += person_seen.step(state, event, match, gallery.watched_name, settings.person_seen)
    elif "person_seen" in camera:
        alerts += person_seen.close(camera.pop("person_seen"), event, _off("person_seen"))
    if "crowd" in settings.rules:
        alerts += crowd.step(camera.setdefault("crowd", {}), event, settings.crowd)
    elif "crowd" in camera:
        alerts += crowd.close(camera.pop("crowd"), event, _off("crowd"))
    return alerts


def on_pose(camera: dict, event: PoseEvent, settings: CameraSettings) -> list[Alert] | None:
    """``on_event`` for a pose event: the fall rule, if the camera runs it."""
    state = camera.setdefault("fall", {})
    if not is_new(state, event):
        return None
    if "fall" in settings.rules:
        return fall.step(state, event, settings.fall)
    return fall.close(state, event, _off("fall"))


def _once_per_face(match: stranger.Match) -> stranger.Match:
    """``match``, asked once per face vector of an event however many rules ask."""
    found: dict[tuple[bytes, ModelRef], tuple[str | None, float]] = {}

    def cached(vector: np.ndarray, embedder: ModelRef) -> tuple[str | None, float]:
        key = (vector.tobytes(), embedder)
        if key not in found:
            found[key] = match(vector, embedder)
        return found[key]

    return cached


def _off(kind: str) -> str:
    return f"the camera no longer runs the {kind} rule"
