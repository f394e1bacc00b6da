"""The notifier's outbox: the messages owed to each target, decided from a batch of alert records and
stored with each target's rule state and the consumer's offsets in one transaction, then delivered
(and marked sent) by the target's own sender. A notifier killed at any moment neither loses a message
it owed nor sends again one a target took; the same record twice owes one message."""

import time
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import Engine, and_, func, select, update

from facestream.alertdb.schema import deliveries, gates
from facestream.alertdb.writer import Received, ends, insert_statement, stored_positions, upsert
from facestream.schemas import Alert, unpack_alert

# (target, its rule state, record) -> None: owe it nothing; a dict: owe it a message, with this note.
Decide = Callable[[str, dict, Alert], dict | None]


@dataclass(frozen=True)
class Owed:
    id: int
    alert: Alert
    attempts: int
    note: dict


class Outbox:
    def __init__(self, engine: Engine, group: str) -> None:
        self.engine, self.group = engine, group

    def positions(self, topic: str) -> dict[int, int]:
        return stored_positions(self.engine, self.group, topic)

    def take(self, batch: list[Received], targets: list[str], decide: Decide) -> int:
        """Decide for every target what ``batch`` owes it, and keep that, the rule states and the offsets,
        all or nothing; return the messages newly owed."""
        owed = 0
        with self.engine.begin() as conn:
            states = dict(
                conn.execute(select(gates.c.target, gates.c.state).where(gates.c.group_id == self.group)).all()
            )
            states = {t: dict(states.get(t) or {}) for t in targets}
            for received in batch:
                if received.alert is None:
                    continue
                for target in targets:
                    note = decide(target, states[target], received.alert)
                    if note is not None:
                        owed += _owe(conn, self.group, target, received, note)
            for target, state in states.items():
                upsert(conn, gates, {"group_id": self.group, "target": target, "state": state}, ("group_id", "target"))
            ends(conn, self.group, batch)
        return owed

    def due(self, target: str, limit: int, now_ns: int | None = None) -> list[Owed]:
        """The target's messages not sent yet whose next try is due, oldest first."""
        query = (
            select(deliveries.c.id, deliveries.c.payload, deliveries.c.attempts, deliveries.c.note)
            .where(
                deliveries.c.group_id == self.group,
                deliveries.c.target == target,
                deliveries.c.status == "pending",
                deliveries.c.next_try_ns <= (now_ns or time.time_ns()),
            )
            .order_by(deliveries.c.id)
            .limit(limit)
        )
        with self.engine.connect() as conn:
            return [Owed(i, unpack_alert(p), attempts, note or {}) for i, p, attempts, note in conn.execute(query)]

    def sent(self, owed_id: int) -> None:
        self._set(owed_id, status="sent", sent_ts_ns=time.time_ns(), attempts=deliveries.c.attempts + 1)

    def failed(self, owed_id: int, error: str, retry_in_s: float) -> None:
        next_try = time.time_ns() + int(retry_in_s * 1e9)
        self._set(owed_id, last_error=error[:1000], next_try_ns=next_try, attempts=deliveries.c.attempts + 1)

    def counts(self) -> dict[tuple[str, str], int]:
        """Messages by (target, status)."""
        query = (
            select(deliveries.c.target, deliveries.c.status, func.count())
            .where(deliveries.c.group_id == self.group)
            .group_by(deliveries.c.target, deliveries.c.status)
        )
        with self.engine.connect() as conn:
            return {(target, status): n for target, status, n in conn.execute(query)}

    def held(self) -> dict[tuple[str, str], int]:
        """Records held back by the rules, by (target, why)."""
        with self.engine.connect() as conn:
            rows = conn.execute(select(gates.c.target, gates.c.state).where(gates.c.group_id == self.group)).all()
        return {(target, why): n for target, state in rows for why, n in (state or {}).get("held", {}).items()}

    def _set(self, owed_id: int, **values) -> None:
        with self.engine.begin() as conn:
            conn.execute(update(deliveries).where(and_(deliveries.c.id == owed_id)).values(**values))


def _owe(conn, group: str, target: str, received: Received, note: dict) -> int:
    """Owe the target a message for this record, unless it is owed already; 1 if it is new."""
    alert = received.alert
    assert alert is not None
    row = {
        "group_id": group,
        "target": target,
        "alert_id": alert.alert_id,
        "state": alert.state,
        "updated_ts_ns": alert.updated_ts_ns,
        "payload": received.payload,
        "note": note or None,
        "status": "pending",
        "attempts": 0,
        "next_try_ns": 0,
    }
    inserted = insert_statement(conn, deliveries, row).on_conflict_do_nothing().returning(deliveries.c.id)
    return int(conn.execute(inserted).first() is not None)
