"""Keeping what the alerts topic says: each batch of records and the offsets after them in one
transaction, so a store killed at any moment resumes exactly where its rows end (Kafka Connect's sink
pattern); a record already kept (the same alert, state and update time: a worker's repeat) changes
nothing. A stranger alert's visit is placed among the recurring strangers in the same transaction
(``strangers.py``). Snapshots and retention work on the rows afterwards."""

import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from sqlalchemy import Connection, Engine, and_, delete, func, select, update

from facestream.alertdb import strangers
from facestream.alertdb.schema import alerts, offsets, records, snapshots
from facestream.schemas import Alert, unpack_alert

STATE_ORDER = {"new": 0, "update": 1, "end": 2}  # of two records at one update time, the later in life wins


@dataclass(frozen=True)
class Received:
    """One record of the alerts topic: where it was, its bytes, and the alert it holds (None: unreadable)."""

    topic: str
    partition: int
    offset: int
    payload: bytes
    alert: Alert | None


@dataclass
class Written:
    kept: int = 0  # records new to the store
    repeats: int = 0  # records it already had
    unreadable: int = 0


class SinkWriter:
    """A consumer group's rows in ``engine``, with the positions it reads from kept beside them."""

    def __init__(self, engine: Engine, group: str) -> None:
        self.engine, self.group = engine, group

    def positions(self, topic: str) -> dict[int, int]:
        return stored_positions(self.engine, self.group, topic)


class AlertWriter(SinkWriter):
    def __init__(self, engine: Engine, group: str, same_stranger: float = strangers.SAME_STRANGER) -> None:
        super().__init__(engine, group)
        self.same_stranger = same_stranger

    def write(self, batch: list[Received]) -> Written:
        """Keep ``batch`` and the offsets past it, all or nothing."""
        written = Written()
        with self.engine.begin() as conn:
            for received in batch:
                if received.alert is None:
                    written.unreadable += 1
                elif _insert_new(conn, received):
                    written.kept += 1
                    _apply(conn, received.alert)
                    strangers.place(conn, received.alert, self.same_stranger)
                else:
                    written.repeats += 1
            ends(conn, self.group, batch)
        return written

    def without_snapshot(self, limit: int) -> list[Alert]:
        """Alerts that have no snapshot row yet, oldest first, as their latest record says."""
        latest = (
            select(records.c.payload)
            .join(
                alerts, and_(records.c.alert_id == alerts.c.alert_id, records.c.updated_ts_ns == alerts.c.updated_ts_ns)
            )
            .outerjoin(snapshots, snapshots.c.alert_id == alerts.c.alert_id)
            .where(snapshots.c.alert_id.is_(None), records.c.state == alerts.c.state)
            .order_by(alerts.c.updated_ts_ns)
            .limit(limit)
        )
        with self.engine.connect() as conn:
            return [unpack_alert(payload) for (payload,) in conn.execute(latest)]

    def keep_snapshot(
        self, alert_id: str, status: str, jpeg: bytes | None, box: tuple[float, float, float, float] | None = None
    ) -> None:
        """``kept`` with its JPEG (and the box drawn on it), ``gone`` (no longer in Kafka) or ``none``
        (the alert has no evidence)."""
        row = {
            "alert_id": alert_id,
            "status": status,
            "jpeg": jpeg,
            "box": None if box is None else list(box),
            "bytes": len(jpeg or b""),
            "attempts": 1,
            "stored_ts_ns": time.time_ns(),
        }
        with self.engine.begin() as conn:
            upsert(conn, snapshots, row, ("alert_id",))

    def prune(
        self,
        max_age_s: float,
        max_snapshot_bytes: int,
        max_snapshot_age_s: float | None = None,
        now_ns: int | None = None,
    ) -> tuple[int, int]:
        """Forget alerts last updated more than ``max_age_s`` ago (with their records, snapshots and visits),
        drop the images of snapshots stored more than ``max_snapshot_age_s`` ago, then the oldest
        snapshots' images until they take at most ``max_snapshot_bytes``; return (alerts forgotten,
        images dropped)."""
        now = now_ns or time.time_ns()
        cutoff = now - int(max_age_s * 1e9)
        with self.engine.begin() as conn:
            old = select(alerts.c.alert_id).where(alerts.c.updated_ts_ns < cutoff)
            strangers.forget_alerts(conn, old)
            for table in (records, snapshots):
                conn.execute(delete(table).where(table.c.alert_id.in_(old)))
            forgotten = conn.execute(delete(alerts).where(alerts.c.updated_ts_ns < cutoff)).rowcount
            dropped = 0
            if max_snapshot_age_s is not None:
                aged = and_(snapshots.c.bytes > 0, snapshots.c.stored_ts_ns < now - int(max_snapshot_age_s * 1e9))
                dropped = conn.execute(
                    update(snapshots).where(aged).values(status="dropped", jpeg=None, bytes=0)
                ).rowcount
            total = conn.execute(select(func.coalesce(func.sum(snapshots.c.bytes), 0))).scalar_one()
            if total > max_snapshot_bytes:
                oldest = conn.execute(
                    select(snapshots.c.alert_id, snapshots.c.bytes)
                    .join(alerts, alerts.c.alert_id == snapshots.c.alert_id)
                    .where(snapshots.c.bytes > 0)
                    .order_by(alerts.c.updated_ts_ns)
                )
                for alert_id, size in oldest:
                    if total <= max_snapshot_bytes:
                        break
                    conn.execute(
                        update(snapshots)
                        .where(snapshots.c.alert_id == alert_id)
                        .values(status="dropped", jpeg=None, bytes=0)
                    )
                    total -= size
                    dropped += 1
        return forgotten, dropped


def _insert_new(conn: Connection, received: Received) -> bool:
    """Insert the record unless the store has it; True if it is new."""
    alert = received.alert
    assert alert is not None
    row = {
        "alert_id": alert.alert_id,
        "state": alert.state,
        "updated_ts_ns": alert.updated_ts_ns,
        "payload": received.payload,
        "source": f"{received.topic}/{received.partition}@{received.offset}",
    }
    inserted = insert_statement(conn, records, row).on_conflict_do_nothing().returning(records.c.alert_id)
    return conn.execute(inserted).first() is not None  # (rowcount is -1 through psycopg here)


def _apply(conn: Connection, alert: Alert) -> None:
    """The alert's row as of this record: made, or moved on if the record is its latest."""
    latest = {
        "state": alert.state,
        "updated_ts_ns": alert.updated_ts_ns,
        "ended_ts_ns": alert.ended_ts_ns,
        "count": alert.count,
        "reason": alert.reason,
        "zone": alert.zone,
        "evidence": [s.fields() for s in alert.evidence],
    }
    row = conn.execute(
        select(alerts.c.updated_ts_ns, alerts.c.state, alerts.c.started_ts_ns).where(
            alerts.c.alert_id == alert.alert_id
        )
    ).first()
    if row is None:
        conn.execute(
            alerts.insert().values(
                alert_id=alert.alert_id,
                kind=alert.kind,
                camera_id=alert.camera_id,
                started_ts_ns=alert.started_ts_ns,
                records=1,
                **latest,
            )
        )
        return
    changes: dict = {"records": alerts.c.records + 1, "started_ts_ns": min(row.started_ts_ns, alert.started_ts_ns)}
    if (alert.updated_ts_ns, STATE_ORDER[alert.state]) >= (row.updated_ts_ns, STATE_ORDER[row.state]):
        changes |= latest
    conn.execute(update(alerts).where(alerts.c.alert_id == alert.alert_id).values(**changes))


def stored_positions(engine: Engine, group: str, topic: str) -> dict[int, int]:
    """The next offset to read per partition of ``topic`` for ``group``, as the rows say."""
    query = select(offsets.c.partition, offsets.c.next_offset).where(
        offsets.c.group_id == group, offsets.c.topic == topic
    )
    with engine.connect() as conn:
        return dict(conn.execute(query).all())


class Positioned(Protocol):
    """Where a record was read: what ``ends`` needs of it."""

    @property
    def topic(self) -> str: ...
    @property
    def partition(self) -> int: ...
    @property
    def offset(self) -> int: ...


def ends(conn: Connection, group: str, batch: Iterable[Positioned]) -> None:
    """Store, in ``conn``'s transaction, the offset after the last record of each partition in ``batch``."""
    after: dict[tuple[str, int], int] = {}
    for r in batch:
        after[(r.topic, r.partition)] = max(after.get((r.topic, r.partition), 0), r.offset + 1)
    for (topic, partition), offset in after.items():
        row = {"group_id": group, "topic": topic, "partition": partition, "next_offset": offset}
        upsert(conn, offsets, row, ("group_id", "topic", "partition"))


def upsert(conn: Connection, table, row: dict, keys: tuple[str, ...]) -> None:
    """Insert ``row``, or update the row with its ``keys``."""
    statement = insert_statement(conn, table, row)
    changes = {k: v for k, v in row.items() if k not in keys}
    conn.execute(statement.on_conflict_do_update(index_elements=list(keys), set_=changes))


def insert_statement(conn: Connection, table, row: dict | None = None):
    """An INSERT (of ``row``, or of the rows given at execution) that can say what to do on a key
    already there, in the connection's dialect."""
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects import postgresql as dialect
    else:
        from sqlalchemy.dialects import sqlite as dialect  # type: ignore[no-redef]  # same insert(), other dialect
    statement = dialect.insert(table)
    return statement if row is None else statement.values(**row)
