"""The alert store as a deployment runs it (``facestream alert-store``), on the real broker, with SQLite
and with a real PostgreSQL server: killed with SIGKILL again and again while it works, it keeps every
record of the topic exactly once, and with ``--sightings`` every embedded face of the detections topic
too; unreadable records are dead-lettered; snapshots come from Kafka."""

import dataclasses
import random
import signal
import subprocess
import time
import uuid
from pathlib import Path

import pytest
from helpers.alert import event, face, person
from helpers.http import free_port, get, scrape
from helpers.kafka import read_topic
from helpers.producer import wait_until
from helpers.prometheus import check_metrics
from sqlalchemy import func, select

from facestream import kafka_clients, kafka_topics
from facestream.alert_store.config import AlertStoreConfig, alert_store_command
from facestream.alertdb import open_database
from facestream.alertdb.schema import alerts, offsets, records, sightings, snapshots
from facestream.schemas import Alert, Frame, Sighting, alert_id_for, pack_alert, pack_detection, pack_frame

S = 1_000_000_000


@pytest.fixture
def names(bootstrap: str) -> dict[str, str]:
    tag = uuid.uuid4().hex[:10]
    names = {part: f"s-{tag}.{part}" for part in ("alerts", "dlq", "frames", "detections")}
    kafka_topics.ensure_topics(
        {names["alerts"]: 2, names["dlq"]: 1, names["frames"]: 1, names["detections"]: 3}, bootstrap
    )
    return {**names, "group": f"s-{tag}.store"}


def store_config(names: dict, database: str, **changes) -> AlertStoreConfig:
    return AlertStoreConfig(
        database=database,
        group=names["group"],
        alerts_topic=names["alerts"],
        dead_letter_topic=names["dlq"],
        frames_topic=names["frames"],
        detections_topic=names["detections"],
        stats_interval_s=1.0,
        **changes,
    )


def lives(count: int, rng: random.Random) -> list[Alert]:
    """``count`` alerts' records as workers send them: new, updates, end, some repeated."""
    sent, hour_ago = [], time.time_ns() - 3600 * S
    for i in range(count):
        camera, t = f"cam-{i % 7}", hour_ago + i * S
        opened = Alert(alert_id_for(camera, "crowd", f"e{i}"), "crowd", "new", camera, t, t, (), 5)
        life = [opened] + [dataclasses.replace(opened, state="update", updated_ts_ns=t + u * S) for u in (1, 2)]
        life.append(dataclasses.replace(opened, state="end", updated_ts_ns=t + 3 * S, ended_ts_ns=t + 3 * S))
        sent += life + rng.sample(life, 1)  # a worker's repeat
    return sent


def table_count(engine, table) -> int:
    with engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(table)).scalar_one()


def stored_through(engine) -> int:
    """Records the store has taken, by the positions it keeps with its rows."""
    with engine.connect() as conn:
        return conn.execute(select(func.coalesce(func.sum(offsets.c.next_offset), 0))).scalar_one()


def kill_now_and_then(config: AlertStoreConfig, log: Path, rng: random.Random, runs: int = 3) -> int:
    """Start the store ``runs`` times, each SIGKILLed at a random moment of its work; how many were."""
    kills = 0
    for _ in range(runs):
        with open(log, "ab") as out:
            store = subprocess.Popen(alert_store_command(config), stdout=out, stderr=subprocess.STDOUT)
        time.sleep(rng.uniform(3.0, 6.0))
        if store.poll() is None:
            store.send_signal(signal.SIGKILL)
            kills += 1
        store.wait(timeout=30)
    return kills


def run_to_the_end(config: AlertStoreConfig, database_url: str, log: Path, records: int):
    """Run the store until it owns the partitions and its rows say it is past all ``records`` (not until
    it idles: a killed member holds the partitions for a session, and a stalled machine can look
    idle), then stop it as asked; its database."""
    engine, port = open_database(database_url), free_port()
    with open(log, "ab") as out:
        final = subprocess.Popen(alert_store_command(config, http_port=port), stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_until(lambda: get(port, "/readyz")[0] == 200, 240, "the last store to own the partitions")
        wait_until(lambda: stored_through(engine) == records, 240, "the last store to reach the topics' ends")
    finally:
        final.send_signal(signal.SIGTERM)
        final.wait(timeout=60)
    assert final.returncode == 0, log.read_text()[-3000:]
    return engine


def test_killed_again_and_again_it_keeps_every_record_exactly_once(
    names: dict, database_url: str, bootstrap: str, tmp_path: Path
) -> None:
    rng = random.Random(7)
    sent = lives(150, rng)  # 750 records, 600 distinct, 150 alerts
    producer = kafka_clients.producer("store-test", bootstrap)
    for index, alert in enumerate(sent):
        kafka_clients.send(producer, names["alerts"], pack_alert(alert), alert.camera_id.encode())
        if index in (100, 500):  # a buggy writer's records
            kafka_clients.send(producer, names["alerts"], b"\x93not an alert", b"cam-0")
    assert producer.flush(30) == 0
    config = store_config(names, database_url, batch=5)
    kills = kill_now_and_then(config, tmp_path / "store.log", rng, runs=4)
    engine = run_to_the_end(config, database_url, tmp_path / "store.log", len(sent) + 2)
    distinct = {(a.alert_id, a.state, a.updated_ts_ns) for a in sent}
    with engine.connect() as conn:
        kept = set(conn.execute(select(records.c.alert_id, records.c.state, records.c.updated_ts_ns)).all())
        positions = dict(conn.execute(select(offsets.c.partition, offsets.c.next_offset)).all())
        ended = conn.execute(select(func.count()).select_from(alerts).where(alerts.c.state == "end")).scalar_one()
    assert kills >= 2, "the store finished before it could be killed: give it more records"
    assert kept == distinct and len(kept) == 600
    assert table_count(engine, alerts) == 150 and ended == 150
    assert set(positions) == {0, 1} and sum(positions.values()) == len(sent) + 2  # past every record of the topic
    dead = read_topic(bootstrap, names["dlq"], 2, timeout_s=10)
    sources = {dict(r.headers())["facestream.source"] for r in dead}
    assert len(sources) == 2 and all(dict(r.headers())["facestream.stage"] == b"schema" for r in dead)


def test_with_sightings_it_keeps_every_embedded_face_once_beside_the_alerts(
    names: dict, database_url: str, bootstrap: str, tmp_path: Path
) -> None:
    rng = random.Random(11)
    producer = kafka_clients.producer("store-test", bootstrap)
    expected, records_sent, start = set(), 0, time.time() - 600
    for seq in range(1500):
        camera = f"cam-{seq % 5}"
        faces = [face(person(seq % 40 + k)) for k in range(seq % 3)]  # 0, 1 or 2 embedded faces
        if seq % 10 == 0:
            faces.append(face())  # a face too small to embed: no embedding, no sighting
        if seq % 4 == 0:
            faces.append(face(track=seq % 7))  # carried by its detector track: no embedding, no sighting
        sent = event(seq, start + seq * 0.1, *faces, camera=camera)
        expected |= {(sent.event_id, i) for i, f in enumerate(faces) if f.embedding is not None}
        repeats = 2 if seq % 50 == 0 else 1  # a detector's repeat after a rebalance
        for _ in range(repeats):
            kafka_clients.send(producer, names["detections"], pack_detection(sent), camera.encode())
        records_sent += repeats
    kafka_clients.send(producer, names["detections"], b"\x93not an event", b"cam-0")
    alerts_sent = lives(20, rng)
    for alert in alerts_sent:
        kafka_clients.send(producer, names["alerts"], pack_alert(alert), alert.camera_id.encode())
    assert producer.flush(30) == 0
    total = records_sent + 1 + len(alerts_sent)
    config = store_config(names, database_url, batch=50, sightings=True)
    kills = kill_now_and_then(config, tmp_path / "store.log", rng, runs=2)
    engine = run_to_the_end(config, database_url, tmp_path / "store.log", total)
    with engine.connect() as conn:
        kept = conn.execute(select(sightings.c.event_id, sightings.c.face)).all()
        row = conn.execute(select(sightings).where(sightings.c.face == 1).limit(1)).one()
    assert kills >= 1, "the store finished before it could be killed: give it more records"
    assert len(kept) == len(set(kept)) and set(kept) == expected  # every embedded face, once
    assert table_count(engine, records) == len({(a.alert_id, a.state, a.updated_ts_ns) for a in alerts_sent})
    assert row.embedder.startswith("sface@2021dec:") and len(row.embedding) == 256 and row.source
    assert row.camera_id.startswith("cam-") and len(row.box) == 4
    dead = read_topic(bootstrap, names["dlq"], 1, timeout_s=10)
    assert dict(dead[0].headers())["facestream.stage"] == b"schema"


def test_snapshots_are_read_back_from_kafka_once(names: dict, bootstrap: str, sample_dir: Path, tmp_path: Path) -> None:
    database = f"sqlite:///{tmp_path / 'alerts.db'}"
    now = time.time_ns()
    frame = Frame("gate", 7, now, 1280, 2082, (sample_dir / "biden.jpg").read_bytes())
    seen = Sighting("e7", 7, now, (574.0, 225.0, 820.0, 546.0), 0.1)
    kept = Alert(alert_id_for("gate", "stranger", "e7#0"), "stranger", "new", "gate", now, now, (seen,), 3)
    gone = dataclasses.replace(kept, alert_id="gone", evidence=(Sighting("e9", 9, now, None, 0.2),))
    offline = Alert("off", "camera_offline", "new", "door", now, now, (), 2, reason="reconnecting: Connection refused")
    producer = kafka_clients.producer("store-test", bootstrap)
    kafka_clients.send(producer, names["frames"], pack_frame(frame), b"gate")
    for alert in (kept, gone, offline):
        kafka_clients.send(producer, names["alerts"], pack_alert(alert), alert.camera_id.encode())
    assert producer.flush(30) == 0
    port = free_port()
    config = store_config(names, database, stop_after_idle_s=15.0, http_port=port)
    store = subprocess.Popen(alert_store_command(config), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:  # its endpoints, as compose's health checks and Prometheus read them
        wait_until(
            lambda: 'facestream_alert_store_snapshots_total{status="kept"} 1.0' in scrape_or_none(port), 60, "metrics"
        )
        assert get(port, "/readyz")[0] == 200
        check_metrics(scrape(port))
    finally:
        _, said = store.communicate(timeout=120)
    assert store.returncode == 0, said[-3000:]
    with open_database(database).connect() as conn:
        found = {row.alert_id: row for row in conn.execute(select(snapshots))}
    assert {k: v.status for k, v in found.items()} == {kept.alert_id: "kept", "gone": "gone", "off": "none"}
    jpeg = found[kept.alert_id].jpeg
    assert jpeg[:2] == b"\xff\xd8" and len(jpeg) > 10_000 and found["gone"].jpeg is None


def scrape_or_none(port: int) -> str:
    try:
        return scrape(port)
    except OSError:
        return ""
