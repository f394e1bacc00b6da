"""Reading the alert store on SQLite and on a real PostgreSQL server: filters, keyset pages newest first,
an alert's life, reviews kept once."""

import dataclasses

from helpers.store import OPENED, S, received

from facestream.alertdb import open_database
from facestream.alertdb.queries import AlertFilter, lifecycles, page, review
from facestream.alertdb.writer import AlertWriter


def stored(database_url: str):
    """25 alerts on two cameras and two kinds, a second apart; the first one with its whole life."""
    writer = AlertWriter(open_database(database_url), "store")
    batch = []
    for i in range(25):
        alert = dataclasses.replace(
            OPENED,
            alert_id=f"a{i:02d}",
            camera_id=("gate", "door")[i % 2],
            kind=("stranger", "crowd")[i % 3 == 0],
            updated_ts_ns=(100 + i) * S,
        )
        batch.append(received(alert, i))
    ended = dataclasses.replace(batch[0].alert, state="end", updated_ts_ns=200 * S, ended_ts_ns=199 * S)
    batch.append(received(ended, 25))
    writer.write(batch)
    return writer.engine


def test_pages_come_newest_first_under_the_filters(database_url: str) -> None:
    engine = stored(database_url)
    first, cursor = page(engine, AlertFilter(), limit=10)
    assert [r["alert_id"] for r in first][:3] == ["a00", "a24", "a23"]  # a00 ended last
    second, cursor = page(engine, AlertFilter(), limit=10, before=cursor)
    third, end = page(engine, AlertFilter(), limit=10, before=cursor)
    seen = [r["alert_id"] for r in first + second + third]
    assert len(seen) == 25 == len(set(seen)) and end is None
    gate, _ = page(engine, AlertFilter(cameras=("gate",), kinds=("stranger",)), limit=50)
    assert {(r["camera_id"], r["kind"]) for r in gate} == {("gate", "stranger")} and len(gate) == 8
    recent, _ = page(engine, AlertFilter(since_ns=120 * S, until_ns=124 * S))
    assert [r["alert_id"] for r in recent] == ["a23", "a22", "a21", "a20"]
    assert [r["alert_id"] for r in page(engine, AlertFilter(states=("end",)))[0]] == ["a00"]


def test_reviews_are_kept_once_and_filter(database_url: str) -> None:
    engine = stored(database_url)
    assert review(engine, ["a01", "a02"], "ana", now_ns=300 * S) == 2
    assert review(engine, ["a02", "a03"], "bo", now_ns=301 * S) == 1  # a02 keeps its first review
    done, _ = page(engine, AlertFilter(reviewed=True))
    assert sorted((r["alert_id"], r["reviewed_by"]) for r in done) == [("a01", "ana"), ("a02", "ana"), ("a03", "bo")]
    assert len(page(engine, AlertFilter(reviewed=False), limit=50)[0]) == 22


def test_an_alerts_life_in_order(database_url: str) -> None:
    lives = lifecycles(stored(database_url), ["a00", "a01", "nope"])
    assert lives == {"a00": [("new", 100 * S), ("end", 200 * S)], "a01": [("new", 101 * S)], "nope": []}
