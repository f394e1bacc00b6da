"""Recurring strangers: stranger alerts whose faces match each other, grouped under one automatic label
(``unknown-17``), so that a stranger who comes back, to the same camera or another, is recognised as
the one seen before.

Each stranger alert is one visit (the stranger rule opens one per visit and carries the stranger's face:
the mean of their faces' embeddings). The alert store places a visit when it keeps the visit's first
record with a face: in the stranger whose face (the mean of its visits' faces) is the most alike, at
``threshold`` or more, else in a new one; later records of the visit refresh its face, never its place.
People correct the grouping on the dashboard: naming a stranger ("this is NAME"), or splitting a visit
off ("not this person"), which then starts a stranger of its own and never rejoins the one it left.
All of it happens in the writer's transaction, so a store that crashes and reads the records again
places them the same way.
"""

from dataclasses import dataclass

import numpy as np
from sqlalchemy import Connection, Engine, delete, insert, select, update

from facestream.alertdb import SAME_STRANGER
from facestream.alertdb.schema import embedder_name, stranger_visits, strangers
from facestream.schemas import Alert

LABEL = "unknown-"


@dataclass(frozen=True)
class VisitRow:
    """One visit of a stranger: its alert and where and when it was."""

    alert_id: str
    camera_id: str
    started_ts_ns: int
    updated_ts_ns: int


@dataclass(frozen=True)
class Stranger:
    stranger_id: int
    name: str | None  # given on the page ("this is NAME"); None while unknown
    visits: tuple[VisitRow, ...]  # oldest first

    @property
    def label(self) -> str:
        return label_of(self.stranger_id)

    @property
    def cameras(self) -> list[str]:
        """The cameras of its visits, in the order it first came to each."""
        return list(dict.fromkeys(visit.camera_id for visit in self.visits))


def label_of(stranger_id: int) -> str:
    return f"{LABEL}{stranger_id}"


def id_of(label: str) -> int | None:
    """The stranger id a label names (``unknown-17`` or ``17``), None for anything else."""
    digits = label.removeprefix(LABEL)
    return int(digits) if digits.isdigit() else None


def place(conn: Connection, alert: Alert, threshold: float = SAME_STRANGER) -> int | None:
    """Place the visit ``alert`` is (a stranger alert's record with a face) in its stranger, in
    ``conn``'s transaction; return the stranger's id (None for an alert without a face)."""
    if alert.kind != "stranger" or alert.face is None or alert.embedder is None:
        return None
    face = _unit(np.frombuffer(alert.face, "<f2").astype(np.float32))
    visit = conn.execute(select(stranger_visits).where(stranger_visits.c.alert_id == alert.alert_id)).first()
    if visit is not None:
        if alert.updated_ts_ns >= visit.updated_ts_ns:
            conn.execute(
                update(stranger_visits)
                .where(stranger_visits.c.alert_id == alert.alert_id)
                .values(face=_packed(face), updated_ts_ns=alert.updated_ts_ns)
            )
            _refresh(conn, visit.stranger_id)
        return visit.stranger_id
    embedder = embedder_name(alert.embedder)
    stranger_id = _closest(conn, face, embedder, threshold)
    if stranger_id is None:
        stranger_id = _new(conn, embedder)
    conn.execute(
        insert(stranger_visits).values(
            alert_id=alert.alert_id,
            stranger_id=stranger_id,
            camera_id=alert.camera_id,
            started_ts_ns=alert.started_ts_ns,
            updated_ts_ns=alert.updated_ts_ns,
            face=_packed(face),
            split_from=[],
        )
    )
    _refresh(conn, stranger_id)
    return stranger_id


def listed(engine: Engine, limit: int = 100) -> list[Stranger]:
    """The strangers seen most recently first, with their visits."""
    with engine.connect() as conn:
        ids = conn.execute(select(strangers.c.stranger_id).order_by(strangers.c.last_ts_ns.desc()).limit(limit))
        found = [_stranger(conn, stranger_id) for (stranger_id,) in ids.all()]
    return [stranger for stranger in found if stranger is not None]


def one(engine: Engine, stranger_id: int) -> Stranger | None:
    with engine.connect() as conn:
        return _stranger(conn, stranger_id)


def of_alerts(engine: Engine, alert_ids: list[str]) -> dict[str, tuple[int, str | None]]:
    """alert id -> (its stranger's id, the stranger's name), for the alerts that are placed visits."""
    if not alert_ids:
        return {}
    query = (
        select(stranger_visits.c.alert_id, strangers.c.stranger_id, strangers.c.name)
        .join(strangers, strangers.c.stranger_id == stranger_visits.c.stranger_id)
        .where(stranger_visits.c.alert_id.in_(alert_ids))
    )
    with engine.connect() as conn:
        return {row.alert_id: (row.stranger_id, row.name) for row in conn.execute(query)}


def name(engine: Engine, stranger_id: int, person: str | None) -> bool:
    """Give the stranger a name (None takes it back); False when there is no such stranger."""
    with engine.begin() as conn:
        changed = conn.execute(
            update(strangers).where(strangers.c.stranger_id == stranger_id).values(name=person)
        ).rowcount
    return changed == 1


def split(engine: Engine, alert_id: str) -> int | None:
    """Take the visit of ``alert_id`` out of its stranger ("not this person") into a stranger of its own;
    return the new stranger's id (None: no such visit). A stranger left without visits is forgotten."""
    with engine.begin() as conn:
        visit = conn.execute(select(stranger_visits).where(stranger_visits.c.alert_id == alert_id)).first()
        if visit is None:
            return None
        embedder = conn.execute(
            select(strangers.c.embedder).where(strangers.c.stranger_id == visit.stranger_id)
        ).scalar_one()
        new_id = _new(conn, embedder)
        conn.execute(
            update(stranger_visits)
            .where(stranger_visits.c.alert_id == alert_id)
            .values(stranger_id=new_id, split_from=[*visit.split_from, visit.stranger_id])
        )
        _refresh(conn, visit.stranger_id)
        _refresh(conn, new_id)
    return new_id


def forget_alerts(conn: Connection, alert_ids) -> None:
    """Forget the visits of ``alert_ids`` (a selectable or a list), and strangers left with none."""
    touched = select(stranger_visits.c.stranger_id).where(stranger_visits.c.alert_id.in_(alert_ids)).distinct()
    ids = [stranger_id for (stranger_id,) in conn.execute(touched)]
    conn.execute(delete(stranger_visits).where(stranger_visits.c.alert_id.in_(alert_ids)))
    for stranger_id in ids:
        _refresh(conn, stranger_id)


def _closest(conn: Connection, face: np.ndarray, embedder: str, threshold: float) -> int | None:
    rows = conn.execute(
        select(strangers.c.stranger_id, strangers.c.face).where(
            strangers.c.embedder == embedder, strangers.c.face.is_not(None)
        )
    ).all()
    if not rows:
        return None
    faces = np.stack([np.frombuffer(row.face, "<f2").astype(np.float32) for row in rows])
    similarities = faces @ face
    best = int(similarities.argmax())
    return rows[best].stranger_id if similarities[best] >= threshold else None


def _new(conn: Connection, embedder: str) -> int:
    return conn.execute(
        insert(strangers).values(embedder=embedder, visits=0).returning(strangers.c.stranger_id)
    ).scalar_one()


def _refresh(conn: Connection, stranger_id: int) -> None:
    """The stranger's face (the mean of its visits' faces), count and times as its visits now say; a
    stranger with no visit left is deleted."""
    rows = conn.execute(
        select(stranger_visits.c.face, stranger_visits.c.started_ts_ns, stranger_visits.c.updated_ts_ns).where(
            stranger_visits.c.stranger_id == stranger_id
        )
    ).all()
    if not rows:
        conn.execute(delete(strangers).where(strangers.c.stranger_id == stranger_id))
        return
    mean = _unit(np.mean([np.frombuffer(row.face, "<f2").astype(np.float32) for row in rows], axis=0))
    conn.execute(
        update(strangers)
        .where(strangers.c.stranger_id == stranger_id)
        .values(
            face=_packed(mean),
            visits=len(rows),
            first_ts_ns=min(row.started_ts_ns for row in rows),
            last_ts_ns=max(row.updated_ts_ns for row in rows),
        )
    )


def _stranger(conn: Connection, stranger_id: int) -> Stranger | None:
    found = conn.execute(select(strangers.c.name).where(strangers.c.stranger_id == stranger_id)).first()
    if found is None:
        return None
    visits = conn.execute(
        select(
            stranger_visits.c.alert_id,
            stranger_visits.c.camera_id,
            stranger_visits.c.started_ts_ns,
            stranger_visits.c.updated_ts_ns,
        )
        .where(stranger_visits.c.stranger_id == stranger_id)
        .order_by(stranger_visits.c.started_ts_ns, stranger_visits.c.alert_id)
    )
    return Stranger(stranger_id, found.name, tuple(VisitRow(*row) for row in visits))


def _unit(vector: np.ndarray) -> np.ndarray:
    return vector / max(float(np.linalg.norm(vector)), 1e-12)


def _packed(vector: np.ndarray) -> bytes:
    return vector.astype("<f2").tobytes()
