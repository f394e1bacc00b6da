"""``facestream alerts``: print alerts as they arrive, one line each (or JSON)."""

from facestream.schemas import ALERTS_TOPIC, Alert, unpack_alert
from facestream.schemas.kinds import kind_of
from facestream.tools.viewer import viewer_command


def describe(alert: Alert) -> str:
    since = (alert.updated_ts_ns - alert.started_ts_ns) / 1e9
    best = alert.evidence[0] if alert.evidence else None
    detail = kind_of(alert.kind).words(alert.count, best.person if best else None)
    if alert.reason:
        detail += f": {alert.reason}"
    if best is not None and best.similarity is not None:
        detail += f", best gallery match {best.similarity:.2f}"
    camera = alert.camera_id if alert.zone is None else f"{alert.camera_id}/{alert.zone}"
    return (
        f"{camera:<10} {alert.kind:<8} {alert.state:<6} {alert.alert_id[:8]}  {detail}, "
        f"{since:.1f} s since it started (frame {best.frame_seq if best else '-'})"
    )


alerts = viewer_command("alerts", ALERTS_TOPIC, "alerts", unpack_alert, describe)
