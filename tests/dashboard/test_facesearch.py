"""Search by face over the alert store's sightings, on SQLite and on a real PostgreSQL server: the
index follows the table, answers in visits newest first, drops what retention took, erases a face on
request; and every search goes to the audit log."""

import threading
import time
from pathlib import Path

import numpy as np
import pytest
from helpers.alert import SFACE, event, face, person

from facestream.alertdb import audit, open_database
from facestream.alertdb.schema import embedder_name
from facestream.alertdb.sightings import ReceivedEvent, SightingWriter
from facestream.dashboard.facesearch import STATE_FILE, SightingsIndex, visits

S = 1_000_000_000
SFACE_NAME = embedder_name(SFACE)


def alike(seed: int, jitter: int) -> np.ndarray:
    """person(seed) as another frame shows it: the same face, a little different (similarity ~0.9)."""
    noise = np.random.default_rng(1000 + jitter).standard_normal(128).astype(np.float32) * 0.04
    vector = person(seed) + noise
    return vector / np.linalg.norm(vector)


@pytest.fixture
def store(database_url: str) -> SightingWriter:
    writer = SightingWriter(open_database(database_url), "store")
    seen = [  # (seq, seconds, camera, person)
        *[(i, 1000 + i, "gate", 1) for i in range(5)],  # a first visit at the gate
        *[(10 + i, 1100 + 2 * i, "hall", 1) for i in range(3)],  # then the hall
        *[(20 + i, 1300 + i, "gate", 1) for i in range(2)],  # back at the gate, minutes later
        *[(30 + i, 1000 + i, "gate", 2) for i in range(4)],  # someone else
    ]
    writer.write(
        [
            ReceivedEvent("detections", 0, offset, event(seq, t, face(alike(who, seq)), camera=camera))
            for offset, (seq, t, camera, who) in enumerate(seen)
        ]
    )
    return writer


def query(seed: int) -> bytes:
    return alike(seed, 999).astype("<f2").tobytes()


def test_a_face_is_found_in_visits_newest_first(store: SightingWriter) -> None:
    index = SightingsIndex(store.engine)
    hits = index.find([query(1)], SFACE_NAME)
    assert len(hits) == 10 and all(hit.similarity > 0.8 for hit in hits)
    assert hits == sorted(hits, key=lambda hit: hit.similarity, reverse=True)
    found = visits(hits)
    assert [(v.camera_id, len(v.hits)) for v in found] == [("gate", 2), ("hall", 3), ("gate", 5)]
    assert [v.first_ts_ns // S for v in found] == [1300, 1100, 1000] and found[1].last_ts_ns == 1104 * S
    assert all(a.sighting.capture_ts_ns > b.sighting.capture_ts_ns for v in found for a, b in zip(v.hits, v.hits[1:]))
    assert len(index.find([query(1)], SFACE_NAME, since_ns=1100 * S)) == 5
    assert index.find([query(1)], "another-embedder") == [] and index.find([query(7)], SFACE_NAME) == []
    both = index.find([query(1), query(2)], SFACE_NAME)  # a person's several faces: each sighting once
    assert len(both) == 14 and len({hit.sighting.sighting_id for hit in both}) == 14


def test_the_index_follows_the_table_and_drops_what_retention_took(store: SightingWriter) -> None:
    index = SightingsIndex(store.engine)
    assert index.follow() == 14 and len(index) == 14
    store.write([ReceivedEvent("detections", 0, 14, event(40, 1400, face(alike(1, 40)), camera="lift"))])
    assert [v.camera_id for v in visits(index.find([query(1)], SFACE_NAME))] == ["lift", "gate", "hall", "gate"]
    gone = store.prune(max_age_s=350, max_sightings=100, now_ns=1400 * S)  # before 1050 s: both at the gate
    assert len(gone) == 5 + 4
    assert [v.camera_id for v in visits(index.find([query(1)], SFACE_NAME))] == ["lift", "gate", "hall"]
    assert len(index) == 15 - 5  # the ids before the oldest kept are dropped; the other person's later ones ...
    assert index.find([query(2)], SFACE_NAME) == [] and len(index) == 15 - 9  # ... when a search finds them gone


def test_forget_erases_a_face_from_the_table_and_the_index(store: SightingWriter) -> None:
    index = SightingsIndex(store.engine)
    index.follow()
    assert index.forget([query(1)], SFACE_NAME) == 10
    assert index.find([query(1)], SFACE_NAME) == [] and len(index) == 4
    fresh = SightingsIndex(store.engine)  # what a restarted dashboard reads: the rows are gone too
    assert fresh.follow() == 4 and len(fresh.find([query(2)], SFACE_NAME)) == 4


def seen_at(camera: str, who: int, seq: int, t: float, offset: int) -> ReceivedEvent:
    return ReceivedEvent("detections", 0, offset, event(seq, t, face(alike(who, seq)), camera=camera))


def test_a_restart_loads_the_saved_index_and_follows_on_from_it(store: SightingWriter, tmp_path: Path) -> None:
    index = SightingsIndex(store.engine, tmp_path / "index")
    index.follow()
    index.save()
    store.write([seen_at("lift", 1, 40, 1400, 14)])
    again = SightingsIndex(store.engine, tmp_path / "index")
    assert again.restore() and len(again) == 14 and again.after_id == index.after_id
    assert again.follow() == 1  # only what was kept since the copy was saved
    assert [v.camera_id for v in visits(again.find([query(1)], SFACE_NAME))] == ["lift", "gate", "hall", "gate"]


def test_an_erasure_leaves_nothing_in_the_saved_index_and_its_ids_are_not_given_again(
    store: SightingWriter, tmp_path: Path
) -> None:
    index = SightingsIndex(store.engine, tmp_path / "index")
    index.follow()
    assert index.forget([query(2)], SFACE_NAME) == 4  # the newest rows: the other person's
    again = SightingsIndex(store.engine, tmp_path / "index")
    assert again.restore() and len(again) == 10 and again.find([query(2)], SFACE_NAME) == []
    store.write([seen_at("lift", 3, 50, 1500, 14)])  # a new id, above the erased ones, so followed
    assert again.follow() == 1 and len(again.find([query(3)], SFACE_NAME)) == 1


def test_a_saved_index_of_another_table_is_not_loaded(store: SightingWriter, tmp_path: Path) -> None:
    index = SightingsIndex(store.engine, tmp_path / "index")
    index.follow()
    index.save()
    other = SightingWriter(open_database(f"sqlite:///{tmp_path / 'fresh.db'}"), "store")
    other.write([seen_at("lift", 3, 50, 1500, 0)])  # a database made afresh: its ids start again
    fresh = SightingsIndex(other.engine, tmp_path / "index")
    assert not fresh.restore() and fresh.follow() == 1 and len(fresh) == 1


def test_the_follower_thread_restores_follows_and_saves(store: SightingWriter, tmp_path: Path) -> None:
    index, stop = SightingsIndex(store.engine, tmp_path / "index"), threading.Event()
    follower = threading.Thread(target=index.keep_up, kwargs={"every_s": 0.05, "stop": stop})
    follower.start()
    try:
        deadline = time.monotonic() + 30
        while not (tmp_path / "index" / STATE_FILE).exists() and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        stop.set()
        follower.join(30)
    restored = SightingsIndex(store.engine, tmp_path / "index")
    assert restored.restore() and len(restored) == 14


def test_an_unreadable_copy_is_said_and_the_table_indexed_afresh(
    store: SightingWriter, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "index"
    folder.mkdir()
    (folder / STATE_FILE).write_text('{"after_id": 3, "graphs": {"x": "broken.usearch"}}')
    (folder / "broken.usearch").write_bytes(b"not an index")
    index, stop = SightingsIndex(store.engine, folder), threading.Event()
    follower = threading.Thread(target=index.keep_up, kwargs={"every_s": 0.05, "stop": stop})
    follower.start()
    try:
        deadline = time.monotonic() + 30
        while len(index) < 14 and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        stop.set()
        follower.join(30)
    assert len(index) == 14 and "cannot be loaded; indexing afresh" in caplog.text


def test_every_search_is_in_the_audit_log(database_url: str) -> None:
    engine = open_database(database_url)
    first = audit.record(engine, audit.AuditEntry("ana", "photo", "sha256 12ab", 3, 1000 * S, 0.5, at_ts_ns=5 * S))
    audit.record(engine, audit.AuditEntry("bo", "forget", "person p-1", 10))
    log = audit.entries(engine)
    assert [(e.who, e.kind, e.results) for e in log] == [("bo", "forget", 10), ("ana", "photo", 3)]
    assert log[1].audit_id == first and audit.entries(engine, before_id=log[0].audit_id) == log[1:]
    lines = audit.as_csv(log).splitlines()
    assert lines[0].startswith("audit_id,at,at_ts_ns,who,address,kind") and "1970-01-01T00:00:05Z" in lines[2]
    with pytest.raises(ValueError, match="unknown kind"):
        audit.AuditEntry("ana", "guess", "", 0)
