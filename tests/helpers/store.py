"""Alert records as a store receives them, for the alert database's tests (see ``pythonpath`` in pyproject)."""

import dataclasses

from facestream.alertdb.writer import Received
from facestream.schemas import Alert, Sighting, alert_id_for, pack_alert

S = 1_000_000_000
OPENED = Alert(
    alert_id=alert_id_for("gate", "stranger", "e1#0"),
    kind="stranger",
    state="new",
    camera_id="gate",
    started_ts_ns=1 * S,
    updated_ts_ns=2 * S,
    evidence=(Sighting("e1", 1, 1 * S, (1.0, 2.0, 50.0, 60.0), 0.1),),
    count=3,
)
UPDATED = dataclasses.replace(OPENED, state="update", updated_ts_ns=4 * S, count=6)
ENDED = dataclasses.replace(OPENED, state="end", updated_ts_ns=9 * S, count=8, ended_ts_ns=8 * S)


def received(alert: Alert | None, offset: int, partition: int = 0, payload: bytes | None = None) -> Received:
    return Received("alerts", partition, offset, payload or pack_alert(alert), alert)
