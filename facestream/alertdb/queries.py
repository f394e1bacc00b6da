"""Reading the alert store, for the dashboard's history and its JSON API: a page of alerts under
filters, newest first (keyset paging: the page after ``before``, so a page costs the same however deep),
one alert with its whole life, its snapshot; and reviews, which are the one thing a reader writes."""

import time
from dataclasses import dataclass

from sqlalchemy import Engine, and_, delete, select, tuple_, update

from facestream.alertdb.schema import alerts, records, snapshots
from facestream.alertdb.writer import STATE_ORDER


@dataclass(frozen=True)
class AlertFilter:
    """Which alerts: every field narrows; empty means any. Times bound ``updated_ts_ns`` (last activity)."""

    cameras: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    alert_ids: tuple[str, ...] = ()  # these alerts only (a link to one)
    states: tuple[str, ...] = ()  # the latest state: new, update, end
    reviewed: bool | None = None
    since_ns: int | None = None
    until_ns: int | None = None


Cursor = tuple[int, str]  # (updated_ts_ns, alert_id) of the last alert of the page before


def page(
    engine: Engine, where: AlertFilter, limit: int = 50, before: Cursor | None = None
) -> tuple[list[dict], Cursor | None]:
    """Up to ``limit`` alerts under ``where``, newest first, after ``before``; and the cursor of the next
    page (None on the last)."""
    query = select(alerts, snapshots.c.status.label("snapshot")).outerjoin(
        snapshots, snapshots.c.alert_id == alerts.c.alert_id
    )
    for column, values in (
        (alerts.c.camera_id, where.cameras),
        (alerts.c.kind, where.kinds),
        (alerts.c.state, where.states),
        (alerts.c.alert_id, where.alert_ids),
    ):
        if values:
            query = query.where(column.in_(values))
    if where.reviewed is not None:
        query = query.where(
            alerts.c.reviewed_ts_ns.is_not(None) if where.reviewed else alerts.c.reviewed_ts_ns.is_(None)
        )
    if where.since_ns is not None:
        query = query.where(alerts.c.updated_ts_ns >= where.since_ns)
    if where.until_ns is not None:
        query = query.where(alerts.c.updated_ts_ns < where.until_ns)
    if before is not None:
        query = query.where(tuple_(alerts.c.updated_ts_ns, alerts.c.alert_id) < tuple_(*before))
    query = query.order_by(alerts.c.updated_ts_ns.desc(), alerts.c.alert_id.desc()).limit(limit + 1)
    with engine.connect() as conn:
        rows = [dict(row) for row in conn.execute(query).mappings()]
    more = len(rows) > limit
    rows = rows[:limit]
    return rows, (rows[-1]["updated_ts_ns"], rows[-1]["alert_id"]) if more and rows else None


def lifecycles(engine: Engine, alert_ids: list[str]) -> dict[str, list[tuple[str, int]]]:
    """Per alert, (state, updated_ts_ns) of each of its records, in the order of its life (one query)."""
    query = select(records.c.alert_id, records.c.state, records.c.updated_ts_ns).where(
        records.c.alert_id.in_(alert_ids)
    )
    found: dict[str, list[tuple[str, int]]] = {alert_id: [] for alert_id in alert_ids}
    with engine.connect() as conn:
        for alert_id, state, ts in conn.execute(query):
            found[alert_id].append((state, ts))
    return {k: sorted(v, key=lambda r: (r[1], STATE_ORDER[r[0]])) for k, v in found.items()}


def latest_record(engine: Engine, alert_id: str) -> bytes | None:
    """The alert's latest record as it came (msgpack), or None if the store has no such alert."""
    with engine.connect() as conn:
        rows = conn.execute(
            select(records.c.updated_ts_ns, records.c.state, records.c.payload).where(records.c.alert_id == alert_id)
        ).all()
    return max(rows, key=lambda r: (r.updated_ts_ns, STATE_ORDER[r.state])).payload if rows else None


def snapshot(engine: Engine, alert_id: str) -> tuple[bytes | None, list[float] | None]:
    """The alert's kept snapshot and the box drawn on it, (None, None) when none is kept."""
    with engine.connect() as conn:
        row = conn.execute(select(snapshots.c.jpeg, snapshots.c.box).where(snapshots.c.alert_id == alert_id)).first()
    return (row.jpeg, row.box) if row is not None else (None, None)


def review(engine: Engine, alert_ids: list[str], by: str, comment: str | None = None, now_ns: int | None = None) -> int:
    """Mark alerts reviewed by ``by`` (those already reviewed keep their first review) and set the
    comment of all of them when one is given; return how many were newly reviewed."""
    with engine.begin() as conn:
        if comment is not None:
            conn.execute(update(alerts).where(alerts.c.alert_id.in_(alert_ids)).values(comment=comment))
        done = conn.execute(
            update(alerts)
            .where(and_(alerts.c.alert_id.in_(alert_ids), alerts.c.reviewed_ts_ns.is_(None)))
            .values(reviewed_ts_ns=now_ns or time.time_ns(), reviewed_by=by)
        )
        return done.rowcount


def forget_person(engine: Engine, name: str) -> tuple[int, int]:
    """Delete the alerts whose evidence names the enrolled person ``name`` (person_seen), with their
    records and snapshots: part of erasing a person; return (alerts, snapshot images) removed."""
    with engine.begin() as conn:
        seen = conn.execute(select(alerts.c.alert_id, alerts.c.evidence).where(alerts.c.kind == "person_seen"))
        ids = [alert_id for alert_id, evidence in seen if any(s.get("person") == name for s in evidence)]
        if not ids:
            return 0, 0
        images = conn.execute(delete(snapshots).where(snapshots.c.alert_id.in_(ids), snapshots.c.bytes > 0)).rowcount
        conn.execute(delete(snapshots).where(snapshots.c.alert_id.in_(ids)))
        conn.execute(delete(records).where(records.c.alert_id.in_(ids)))
        return conn.execute(delete(alerts).where(alerts.c.alert_id.in_(ids))).rowcount, images
