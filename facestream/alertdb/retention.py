"""Retention by kind, as it was applied: the alert store writes, after each pass, how many days it
keeps each kind, where, and what the pass removed; the admin page reads it. The topics' retention is
Kafka's (``facestream kafka retention``) and is read from the brokers, not from here."""

import time
from dataclasses import dataclass

from sqlalchemy import Engine, select, update

from facestream.alertdb.schema import retention

KINDS = ("alerts", "evidence", "sightings", "audit")  # what the alert store's database keeps


@dataclass(frozen=True)
class Applied:
    kind: str
    days: float
    place: str
    applied_by: str
    applied_ts_ns: int
    removed: int
    removed_total: int


def applied(engine: Engine, kind: str, days: float, place: str, by: str, removed: int) -> None:
    """Record one pass over ``kind``: kept ``days`` in ``place`` by ``by``, ``removed`` rows gone."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}: one of {', '.join(KINDS)}")
    row = {"days": days, "place": place, "applied_by": by, "applied_ts_ns": time.time_ns(), "removed": removed}
    with engine.begin() as conn:
        done = conn.execute(
            update(retention)
            .where(retention.c.kind == kind)
            .values(**row, removed_total=retention.c.removed_total + removed)
        )
        if not done.rowcount:
            conn.execute(retention.insert(), {"kind": kind, **row, "removed_total": removed})


def listed(engine: Engine) -> list[Applied]:
    with engine.connect() as conn:
        return [Applied(**row._asdict()) for row in conn.execute(select(retention).order_by(retention.c.kind))]
