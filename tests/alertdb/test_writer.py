"""The alert store's database on SQLite and on a real PostgreSQL server: records and offsets kept
together, repeats changing nothing, the latest record winning whatever the order, snapshots, retention."""

import dataclasses
import subprocess
import sys

import pytest
from helpers.store import ENDED, OPENED, UPDATED, S, received
from sqlalchemy import select

from facestream.alertdb import audit, open_database, queries, retention
from facestream.alertdb.schema import alerts, records, snapshots
from facestream.alertdb.writer import AlertWriter
from facestream.errors import ConfigError


@pytest.fixture
def writer(database_url: str) -> AlertWriter:
    return AlertWriter(open_database(database_url), "store")


def rows(writer: AlertWriter, table) -> list:
    with writer.engine.connect() as conn:
        return conn.execute(select(table)).mappings().all()


def test_records_and_offsets_are_kept_together_and_repeats_change_nothing(writer: AlertWriter) -> None:
    written = writer.write([received(OPENED, 0), received(UPDATED, 1), received(OPENED, 2)])  # a worker's repeat
    assert (written.kept, written.repeats) == (2, 1)
    assert writer.positions("alerts") == {0: 3}
    again = writer.write([received(UPDATED, 3, partition=1), received(ENDED, 4, partition=1)])
    assert (again.kept, again.repeats) == (1, 1) and writer.positions("alerts") == {0: 3, 1: 5}
    (row,) = rows(writer, alerts)
    assert (row["state"], row["count"], row["ended_ts_ns"], row["records"]) == ("end", 8, 8 * S, 3)
    assert row["evidence"] == [OPENED.evidence[0].fields()]
    assert sorted(r["state"] for r in rows(writer, records)) == ["end", "new", "update"]


def test_the_latest_record_wins_whatever_order_they_come_in(writer: AlertWriter) -> None:
    writer.write([received(ENDED, 0), received(UPDATED, 1), received(OPENED, 2)])
    (row,) = rows(writer, alerts)
    assert (row["state"], row["updated_ts_ns"], row["started_ts_ns"], row["records"]) == ("end", 9 * S, 1 * S, 3)


def test_the_zone_an_alert_names_is_kept(writer: AlertWriter) -> None:
    writer.write([received(dataclasses.replace(OPENED, zone="door"), 0)])
    (row,) = rows(writer, alerts)
    assert row["zone"] == "door"


def test_an_unreadable_record_is_counted_and_passed(writer: AlertWriter) -> None:
    written = writer.write([received(None, 0, payload=b"\x93broken"), received(OPENED, 1)])
    assert (written.unreadable, written.kept) == (1, 1) and writer.positions("alerts") == {0: 2}


def test_snapshots_are_asked_for_once_and_retention_drops_old_alerts_then_old_images(writer: AlertWriter) -> None:
    later = dataclasses.replace(OPENED, alert_id="later", updated_ts_ns=20 * S)
    writer.write([received(OPENED, 0), received(later, 1)])
    assert [a.alert_id for a in writer.without_snapshot(10)] == [OPENED.alert_id, "later"]
    writer.keep_snapshot(OPENED.alert_id, "kept", b"\xff\xd8" + b"x" * 998)
    writer.keep_snapshot("later", "kept", b"\xff\xd8" + b"y" * 498)
    assert writer.without_snapshot(10) == []
    assert writer.prune(max_age_s=100, max_snapshot_bytes=600, now_ns=50 * S) == (0, 1)  # the older image goes
    assert writer.prune(max_age_s=40, max_snapshot_bytes=600, now_ns=50 * S) == (1, 0)  # its alert, 48 s old
    assert [r["alert_id"] for r in rows(writer, alerts)] == ["later"]


def test_a_database_that_cannot_be_reached_is_a_clear_error_with_its_password_masked() -> None:
    with pytest.raises(ConfigError, match=r"cannot open the alert database postgresql://\*\*\*@127.0.0.1:1/") as caught:
        open_database("postgresql://store:hunter2@127.0.0.1:1/alerts")
    assert "hunter2" not in str(caught.value)
    with pytest.raises(ConfigError, match="sqlite:///PATH or postgresql"):
        open_database("mysql://x/y")


def test_services_starting_together_on_a_new_database_all_open_it(database_url: str) -> None:
    # The demo's store and dashboard made the tables at once: one died on "table alerts already exists".
    opening = f"from facestream.alertdb import open_database; open_database({database_url!r})"
    starters = [subprocess.Popen([sys.executable, "-c", opening], stderr=subprocess.PIPE, text=True) for _ in range(4)]
    outcomes = [(starter.wait(timeout=60), starter.stderr.read()) for starter in starters]
    assert [code for code, _ in outcomes] == [0] * 4, outcomes


def test_retention_by_kind_drops_old_evidence_and_audit_and_records_each_pass(writer: AlertWriter) -> None:
    engine = writer.engine
    writer.write([received(OPENED, 0)])
    writer.keep_snapshot(OPENED.alert_id, "kept", b"\xff\xd8" + b"x" * 998)
    stored = rows(writer, snapshots)[0]["stored_ts_ns"]
    images_10_s = dict(max_age_s=10**10, max_snapshot_bytes=10**9, max_snapshot_age_s=10)  # alerts: centuries
    assert writer.prune(**images_10_s, now_ns=stored + 5 * S) == (0, 0)
    assert writer.prune(**images_10_s, now_ns=stored + 11 * S) == (0, 1)  # the image goes, the alert stays
    assert [r["status"] for r in rows(writer, snapshots)] == ["dropped"] and len(rows(writer, alerts)) == 1
    audit.record(engine, audit.AuditEntry("ana", "evidence", "alert a1", 1, at_ts_ns=1 * S))
    audit.record(engine, audit.AuditEntry("ana", "evidence", "alert a2", 1, at_ts_ns=3 * S))
    assert audit.expire(engine, before_ts_ns=2 * S) == 1 and [e.subject for e in audit.entries(engine)] == ["alert a2"]
    retention.applied(engine, "audit", 365.0, "audit", "store", 1)
    retention.applied(engine, "audit", 365.0, "audit", "store", 2)
    (pass_,) = retention.listed(engine)
    assert (pass_.kind, pass_.days, pass_.removed, pass_.removed_total) == ("audit", 365.0, 2, 3)
    with pytest.raises(ValueError, match="unknown kind"):
        retention.applied(engine, "faces", 1.0, "x", "store", 0)


def test_erasing_a_person_removes_the_alerts_that_name_them(writer: AlertWriter) -> None:
    named = dataclasses.replace(OPENED.evidence[0], person="Barack Obama")
    seen = dataclasses.replace(OPENED, alert_id="seen-1", kind="person_seen", evidence=(named,))
    writer.write([received(OPENED, 0), received(seen, 1)])
    writer.keep_snapshot("seen-1", "kept", b"\xff\xd8" + b"x" * 98)
    assert queries.forget_person(writer.engine, "Barack Obama") == (1, 1)
    assert [r["alert_id"] for r in rows(writer, alerts)] == [OPENED.alert_id]  # the stranger's stays
    assert queries.forget_person(writer.engine, "Barack Obama") == (0, 0)
