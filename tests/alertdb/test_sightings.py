"""Sightings in the alert store's database, on SQLite and on a real PostgreSQL server: every embedded face
of an event kept once with the offsets after it, fed to the index in the order kept, forgotten by age
and by count."""

import pytest
from helpers.alert import event, face, person
from sqlalchemy import select

from facestream.alertdb import open_database
from facestream.alertdb.schema import embedder_name, sightings
from facestream.alertdb.sightings import ReceivedEvent, SightingWriter, since

S = 1_000_000_000


@pytest.fixture
def writer(database_url: str) -> SightingWriter:
    return SightingWriter(open_database(database_url), "store")


def received(offset: int, *faces, seq: int | None = None, t: float = 100.0, camera: str = "gate", partition=0):
    return ReceivedEvent(
        "detections", partition, offset, event(offset if seq is None else seq, t, *faces, camera=camera)
    )


def test_each_embedded_face_is_kept_once_with_the_offsets_after_its_event(writer: SightingWriter) -> None:
    faces = (face(person(1)), face(None), face(person(2)))  # the middle one has no embedding
    two = received(0, *faces)
    written = writer.write([two, received(1, face(None)), ReceivedEvent("detections", 0, 2, None)])
    assert (written.kept, written.repeats, written.events, written.unreadable) == (2, 0, 1, 1)
    assert writer.positions("detections") == {0: 3}
    again = writer.write([received(3, *faces, seq=0, partition=1)])  # a detector's repeat of frame 0
    assert (again.kept, again.repeats) == (0, 2) and writer.positions("detections") == {0: 3, 1: 4}
    with writer.engine.connect() as conn:
        rows = conn.execute(select(sightings).order_by(sightings.c.sighting_id)).mappings().all()
    assert [(r["face"], r["camera_id"], r["frame_seq"], r["capture_ts_ns"]) for r in rows] == [
        (0, "gate", 0, 100 * S),
        (2, "gate", 0, 100 * S),
    ]
    assert rows[0]["embedding"] == person(1).astype("<f2").tobytes() and rows[0]["source"] == "detections/0@0"
    assert rows[1]["box"] == [10.0, 10.0, 110.0, 110.0] and rows[1]["embedder"] == embedder_name(two.event.embedder)


def test_the_index_is_fed_in_the_order_sightings_were_kept_a_page_at_a_time(writer: SightingWriter) -> None:
    writer.write([received(i, face(person(i))) for i in range(25)])
    kept = list(since(writer.engine, page=10))
    assert [k.embedding for k in kept] == [person(i).astype("<f2").tobytes() for i in range(25)]
    ids = [k.sighting_id for k in kept]
    assert ids == sorted(ids) and len(set(ids)) == 25
    assert [k.sighting_id for k in since(writer.engine, after_id=ids[19])] == ids[20:]


def test_retention_forgets_by_age_then_keeps_the_newest_up_to_the_count(writer: SightingWriter) -> None:
    writer.write([received(i, face(person(i)), t=float(t)) for i, t in enumerate([10, 20, 30, 40, 50, 60])])
    ids = [k.sighting_id for k in since(writer.engine)]
    gone = writer.prune(max_age_s=35, max_sightings=2, now_ns=60 * S)  # 10 and 20 too old; 30 over the count
    assert sorted(gone) == ids[:4]
    assert [k.sighting_id for k in since(writer.engine)] == ids[4:]
    assert writer.prune(max_age_s=3600, max_sightings=10, now_ns=60 * S) == []
