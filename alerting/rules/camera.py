"""One camera's rules together: each new event goes through every rule the camera runs, once."""

from facestream.alerting.config import CameraSettings
from facestream.alerting.rules import crowd, stranger
from facestream.alerting.rules.state import is_new
from facestream.schemas import Alert, DetectionEvent


def on_event(
    camera: dict, event: DetectionEvent, match: stranger.Match, settings: CameraSettings
) -> list[Alert] | None:
    """Update ``camera`` (its JSON-able state, changed in place) with ``event``; return the alerts, or
    None for a duplicate or replayed event, which changes nothing."""
    if not is_new(camera, event):
        return None
    alerts = []
    if "stranger" in settings.rules:
        alerts += stranger.step(camera.setdefault("stranger", {}), event, match, settings.stranger)
    if "crowd" in settings.rules:
        alerts += crowd.step(camera.setdefault("crowd", {}), event, settings.crowd)
    return alerts
