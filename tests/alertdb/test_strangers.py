"""Recurring strangers in the alert store, on SQLite and on a real PostgreSQL server: stranger alerts whose
faces match are visits of one stranger under one label, wherever they were; records of a visit refresh
it without moving it; people name and split them; retention forgets them with their alerts."""

import dataclasses

import numpy as np
import pytest
from helpers.store import OPENED, S, received

from facestream.alertdb import open_database, strangers
from facestream.alertdb.writer import AlertWriter
from facestream.schemas import Alert, ModelRef, alert_id_for

SFACE = ModelRef("sface", "2021dec", "ab" * 32)
RNG = np.random.default_rng(7)
PEOPLE = [v / np.linalg.norm(v) for v in RNG.normal(size=(3, 128))]  # three people, nearly orthogonal


def looks(person: int, noise: float = 0.5) -> bytes:
    """A face of ``person``: their vector moved by ``noise`` (0.5 leaves a cosine of about 0.9)."""
    vector = PEOPLE[person] + RNG.normal(size=128) * noise / np.sqrt(128)
    return (vector / np.linalg.norm(vector)).astype("<f2").tobytes()


def visit(camera: str, first: str, at_s: int, face: bytes | None, state: str = "new") -> Alert:
    return dataclasses.replace(
        OPENED,
        alert_id=alert_id_for(camera, "stranger", first),
        camera_id=camera,
        state=state,
        started_ts_ns=at_s * S,
        updated_ts_ns=(at_s + 1) * S,
        ended_ts_ns=(at_s + 5) * S if state == "end" else None,
        face=face,
        embedder=None if face is None else SFACE,
    )


@pytest.fixture
def writer(database_url: str) -> AlertWriter:
    return AlertWriter(open_database(database_url), "store")


def labels(writer: AlertWriter) -> dict[str, list[str]]:
    """label -> its visits' cameras, oldest first."""
    return {s.label: [v.camera_id for v in s.visits] for s in strangers.listed(writer.engine)}


def test_a_stranger_who_comes_back_anywhere_is_one_label(writer: AlertWriter) -> None:
    door, lobby, again, other = (
        visit("door", "e1#0", 10, looks(0)),
        visit("lobby", "e2#0", 100, looks(0)),
        visit("door", "e3#0", 400, looks(0)),
        visit("lobby", "e4#0", 120, looks(1)),
    )
    writer.write([received(a, i) for i, a in enumerate([door, lobby, other, again])])
    found = strangers.listed(writer.engine)
    assert labels(writer) == {found[0].label: ["door", "lobby", "door"], found[1].label: ["lobby"]}
    first = found[0]
    assert first.cameras == ["door", "lobby"] and [v.alert_id for v in first.visits][0] == door.alert_id
    placed = strangers.of_alerts(writer.engine, [door.alert_id, other.alert_id, "nope"])
    assert placed == {door.alert_id: (first.stranger_id, None), other.alert_id: (found[1].stranger_id, None)}
    assert strangers.id_of(first.label) == first.stranger_id and strangers.id_of("alice") is None


def test_later_records_refresh_a_visit_without_moving_it_and_repeats_change_nothing(writer: AlertWriter) -> None:
    opened = visit("door", "e1#0", 10, looks(0))
    writer.write([received(opened, 0), received(visit("lobby", "e2#0", 50, looks(1)), 1)])
    before = labels(writer)
    # The visit's end says it looked like person 1 after all: it stays where it was placed.
    ended = dataclasses.replace(opened, state="end", updated_ts_ns=20 * S, ended_ts_ns=20 * S, face=looks(1))
    written = writer.write([received(opened, 0), received(ended, 2)])
    assert (written.kept, written.repeats) == (1, 1)
    assert labels(writer) == before


def test_an_alert_without_a_face_is_no_visit(writer: AlertWriter) -> None:
    writer.write([received(visit("door", "e1#0", 10, None), 0)])
    assert strangers.listed(writer.engine) == []


def test_named_and_split_as_people_say(writer: AlertWriter) -> None:
    a, b, c = (visit(cam, f"e{i}#0", 10 * i, looks(2)) for i, cam in enumerate(["door", "lobby", "yard"], 1))
    writer.write([received(x, i) for i, x in enumerate([a, b, c])])
    (stranger,) = strangers.listed(writer.engine)
    assert strangers.name(writer.engine, stranger.stranger_id, "Carol")
    assert not strangers.name(writer.engine, 999, "Nobody")
    new_id = strangers.split(writer.engine, b.alert_id)
    assert new_id is not None and new_id != stranger.stranger_id
    assert strangers.split(writer.engine, "no such alert") is None
    kept, alone = strangers.one(writer.engine, stranger.stranger_id), strangers.one(writer.engine, new_id)
    assert kept is not None and alone is not None
    assert (kept.name, [v.camera_id for v in kept.visits]) == ("Carol", ["door", "yard"])
    assert (alone.name, [v.camera_id for v in alone.visits]) == (None, ["lobby"])
    # A label once given is never given again, even after its stranger is gone.
    assert strangers.split(writer.engine, b.alert_id) not in (new_id, stranger.stranger_id)
    assert strangers.one(writer.engine, new_id) is None


def test_retention_forgets_visits_with_their_alerts(writer: AlertWriter) -> None:
    old, recent = visit("door", "e1#0", 10, looks(0)), visit("door", "e2#0", 1000, looks(1))
    writer.write([received(old, 0), received(recent, 1)])
    writer.prune(max_age_s=500, max_snapshot_bytes=10**9, now_ns=1100 * S)
    assert list(labels(writer).values()) == [["door"]]
    (left,) = strangers.listed(writer.engine)
    assert [v.alert_id for v in left.visits] == [recent.alert_id]
