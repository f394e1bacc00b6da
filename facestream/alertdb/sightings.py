"""Keeping every face with an embedding that the detectors saw (a sighting), for search by face.

The store reads the detections topic as it reads the alerts topic: each batch of events becomes rows,
one per face that carries an embedding, written with the offsets after them in one transaction, so a
store killed at any moment resumes exactly where its rows end. A face already kept (the same event
and place in it: a detector's repeat after a rebalance) is not kept twice. Each row's ``sighting_id``
is its key in the nearest-neighbour index, which ``since`` feeds in the order rows were kept. Retention
forgets sightings by age and keeps at most a number of them, oldest forgotten first.
"""

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass

from sqlalchemy import Connection, Engine, TextClause, delete, func, select, text
from sqlalchemy.dialects import postgresql

from facestream.alertdb.schema import embedder_name, sightings
from facestream.alertdb.writer import SinkWriter, Written, ends, insert_statement
from facestream.schemas import DetectionEvent

IN_LIST = 10_000  # ids per IN (...) list: bounded statements


@dataclass(frozen=True)
class ReceivedEvent:
    """One record of the detections topic: where it was, and the event it holds (None: unreadable)."""

    topic: str
    partition: int
    offset: int
    event: DetectionEvent | None


@dataclass
class SightingsWritten(Written):  # kept and repeats count faces
    events: int = 0  # events with at least one embedded face


@dataclass(frozen=True)
class Kept:
    """A sighting as the index needs it: its key and its embedding."""

    sighting_id: int
    embedder: str
    embedding: bytes


@dataclass(frozen=True)
class Seen:
    """A sighting as a search shows it: where and when the face was, and which event holds it."""

    sighting_id: int
    event_id: str
    face: int
    camera_id: str
    frame_seq: int
    capture_ts_ns: int
    box: tuple[float, float, float, float]
    score: float


class SightingWriter(SinkWriter):
    def write(self, batch: list[ReceivedEvent]) -> SightingsWritten:
        """Keep the embedded faces of ``batch`` and the offsets past it, all or nothing."""
        written, rows = SightingsWritten(), []
        for received in batch:
            event = received.event
            if event is None:
                written.unreadable += 1
                continue
            faces = [(i, face) for i, face in enumerate(event.faces) if face.embedding is not None]
            if not faces or event.embedder is None:
                continue
            written.events += 1
            embedder = embedder_name(event.embedder)
            source = f"{received.topic}/{received.partition}@{received.offset}"
            rows += [
                {
                    "event_id": event.event_id,
                    "face": i,
                    "camera_id": event.camera_id,
                    "frame_seq": event.frame_seq,
                    "capture_ts_ns": event.capture_ts_ns,
                    "box": list(face.box),
                    "score": face.score,
                    "embedder": embedder,
                    "embedding": face.embedding,
                    "source": source,
                }
                for i, face in faces
            ]
        with self.engine.begin() as conn:
            if rows:
                written.kept = _insert(conn, rows)
                written.repeats = len(rows) - written.kept
            ends(conn, self.group, batch)
        return written

    def prune(self, max_age_s: float, max_sightings: int, now_ns: int | None = None) -> list[int]:
        """Forget sightings captured more than ``max_age_s`` ago, then the oldest beyond ``max_sightings``;
        return their ids (for the index to forget them too)."""
        cutoff = (now_ns or time.time_ns()) - int(max_age_s * 1e9)
        with self.engine.begin() as conn:
            old = select(sightings.c.sighting_id).where(sightings.c.capture_ts_ns < cutoff)
            gone = list(conn.execute(old).scalars())
            total = conn.execute(select(func.count()).select_from(sightings)).scalar_one() - len(gone)
            if total > max_sightings:
                oldest = (
                    select(sightings.c.sighting_id)
                    .where(sightings.c.capture_ts_ns >= cutoff)
                    .order_by(sightings.c.capture_ts_ns, sightings.c.sighting_id)
                    .limit(total - max_sightings)
                )
                gone += conn.execute(oldest).scalars()
            _delete(conn, gone)
        return gone


def _insert(conn: Connection, rows: list[dict]) -> int:
    """Insert ``rows`` in one statement, skipping faces already kept; return how many were new."""
    if conn.dialect.name == "postgresql":
        # One array per column, unnested by the server: a short statement whatever the batch. A multi-row
        # VALUES of thousands of parameters spends most of its time in psycopg's parsing of the query
        # (5,600 rows/s on two cores, against 21,000 this way).
        columns = {name: [row[name] for row in rows] for name in _COLUMNS}
        columns["box"] = [json.dumps(box) for box in columns["box"]]
        return conn.execute(_UNNEST, columns).rowcount
    # SQLAlchemy batches an executemany with RETURNING into multi-row statements.
    inserted = insert_statement(conn, sightings).on_conflict_do_nothing()
    return len(conn.execute(inserted.returning(sightings.c.sighting_id), rows).all())


def _unnest() -> TextClause:
    """PostgreSQL's INSERT of every column but the key from arrays, one element per row."""
    named = [c for c in sightings.columns if c.name != "sighting_id"]
    types = [c.type.compile(dialect=postgresql.dialect()) for c in named]
    arrays = ", ".join(f"CAST(:{c.name} AS {kind}[])" for c, kind in zip(named, types))
    names = ", ".join(c.name for c in named)
    return text(f"INSERT INTO {sightings.name} ({names}) SELECT * FROM unnest({arrays}) ON CONFLICT DO NOTHING")


_COLUMNS = tuple(c.name for c in sightings.columns if c.name != "sighting_id")
_UNNEST = _unnest()


def since(engine: Engine, after_id: int = 0, page: int = 10_000) -> Iterator[Kept]:
    """Sightings kept after ``after_id``, in the order they were kept, a page of rows at a time."""
    while True:
        query = (
            select(sightings.c.sighting_id, sightings.c.embedder, sightings.c.embedding)
            .where(sightings.c.sighting_id > after_id)
            .order_by(sightings.c.sighting_id)
            .limit(page)
        )
        with engine.connect() as conn:
            rows = conn.execute(query).all()
        yield from (Kept(*row) for row in rows)
        if len(rows) < page:
            return
        after_id = rows[-1].sighting_id


def seen(engine: Engine, ids: list[int], since_ns: int = 0) -> dict[int, Seen]:
    """The sightings of ``ids`` still kept and captured at ``since_ns`` or later, by id."""
    columns = [sightings.c[name] for name in Seen.__dataclass_fields__]
    found = {}
    with engine.connect() as conn:
        for start in range(0, len(ids), IN_LIST):
            query = select(*columns).where(
                sightings.c.sighting_id.in_(ids[start : start + IN_LIST]), sightings.c.capture_ts_ns >= since_ns
            )
            for row in conn.execute(query):
                found[row.sighting_id] = Seen(**{**row._asdict(), "box": tuple(row.box)})
    return found


def first_id(engine: Engine) -> int | None:
    """The oldest sighting's id still kept (retention forgets the oldest first), None when none is."""
    with engine.connect() as conn:
        return conn.execute(select(func.min(sightings.c.sighting_id))).scalar_one()


def highest_id_given(engine: Engine) -> int:
    """The highest id the table ever gave a sighting, deleted ones included (0: none yet): a copy of the
    index that holds more is of another table."""
    if engine.dialect.name == "postgresql":
        given = text("SELECT pg_sequence_last_value(pg_get_serial_sequence(:table, 'sighting_id')::regclass)")
    else:
        given = text("SELECT seq FROM sqlite_sequence WHERE name = :table")
    with engine.connect() as conn:
        return conn.execute(given, {"table": sightings.name}).scalar() or 0


def remove(engine: Engine, ids: list[int]) -> int:
    """Delete the sightings of ``ids`` (erasure on request); return how many there were."""
    with engine.begin() as conn:
        return _delete(conn, ids)


def _delete(conn: Connection, ids: list[int]) -> int:
    removed = 0
    for start in range(0, len(ids), IN_LIST):
        removed += conn.execute(
            delete(sightings).where(sightings.c.sighting_id.in_(ids[start : start + IN_LIST]))
        ).rowcount
    return removed
