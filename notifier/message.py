"""An alert record in words for people: a title that says what and where, a body with when (in the
target's time zone), how much, why, and a link to it on the dashboard."""

from datetime import datetime
from zoneinfo import ZoneInfo

from facestream.schemas import Alert
from facestream.schemas.kinds import kind_of

NS = 1_000_000_000


def title(alert: Alert) -> str:
    ended = " (over)" if alert.state == "end" else ""
    return f"{named(alert) or kind_of(alert.kind).title} at {where(alert)}{ended}"


def where(alert: Alert) -> str:
    """The camera, and the zone of it the alert is about: ``gate`` or ``gate (door)``."""
    return alert.camera_id if alert.zone is None else f"{alert.camera_id} ({alert.zone})"


def named(alert: Alert) -> str | None:
    """The enrolled person an alert names (person_seen), as enrolled."""
    return next((s.person for s in alert.evidence if s.person), None)


def body(alert: Alert, zone: ZoneInfo, dashboard_url: str) -> str:
    when = datetime.fromtimestamp(alert.started_ts_ns / NS, zone).strftime("%Y-%m-%d %H:%M:%S %Z")
    lines = [
        f"{alert.kind} {alert.state} on camera {where(alert)}, since {when}",
        kind_of(alert.kind).words(alert.count, named(alert)),
    ]
    if alert.reason:
        lines.append(alert.reason)
    if dashboard_url:
        lines.append(link(alert, dashboard_url))
    return "\n".join(lines)


def link(alert: Alert, dashboard_url: str) -> str:
    """The alert's page on the dashboard ("" without a dashboard address)."""
    return f"{dashboard_url.rstrip('/')}/history?alert={alert.alert_id}" if dashboard_url else ""
