"""The store: a sink consumer (``alertdb.sink``: positions from the database, each batch of records
written with the offsets past it in one transaction); an unreadable record dead-lettered (and
acknowledged) before its offset is; snapshots read back from the frames topics by a thread of their
own; retention now and then. With ``--sightings`` it also reads the detections topic and keeps every
face that carries an embedding (``alertdb.sightings``), for search by face."""

import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily

from facestream import health, kafka_clients, kafka_topics
from facestream.alert_store.config import AlertStoreConfig
from facestream.alertdb import audit, default_url, open_database, retention
from facestream.alertdb.sightings import ReceivedEvent, SightingWriter
from facestream.alertdb.sink import Every, consume_into
from facestream.alertdb.writer import AlertWriter, Received
from facestream.errors import BrokerError
from facestream.evidence import evidence_jpeg
from facestream.redact import redact
from facestream.schemas import Alert, DetectionEvent, SchemaError, unpack_alert, unpack_detection

log = logging.getLogger(__name__)
DAY_S = 86400
SNAPSHOT_BATCH = 20  # alerts whose snapshots are looked for per pass
SNAPSHOT_IDLE_S = 1.0


@dataclass(eq=False)  # a collector in a registry: hashed by identity
class StoreStats:
    records: int = 0  # read from Kafka
    kept: int = 0  # new to the database
    repeats: int = 0  # already there (a worker's repeat, or a replay)
    unreadable: int = 0  # dead-lettered
    keeps_sightings: bool = False  # --sightings: the figures below are on the stats line
    sightings: int = 0  # faces with an embedding new to the database
    sightings_forgotten: int = 0  # past the sightings' retention
    snapshots: dict[str, int] = field(default_factory=dict)  # by status: kept, gone, none
    forgotten: int = 0  # alerts past the retention
    images_dropped: int = 0  # snapshot images over the size limit
    started: float = field(default_factory=time.monotonic)

    def line(self) -> str:
        shots = " ".join(f"{k}={v}" for k, v in sorted(self.snapshots.items())) or "none yet"
        line = (
            f"records {self.records}, kept {self.kept}, repeats {self.repeats}, unreadable {self.unreadable} | "
            f"snapshots {shots} | forgotten {self.forgotten}, images dropped {self.images_dropped}"
        )
        if self.keeps_sightings:
            line += f" | sightings kept {self.sightings}, forgotten {self.sightings_forgotten}"
        return line

    def collect(self):
        for name, help_text, value in (
            ("facestream_alert_store_records", "Alert records read from Kafka", self.records),
            ("facestream_alert_store_kept", "Alert records new to the database", self.kept),
            ("facestream_alert_store_repeats", "Alert records the database already had", self.repeats),
            (
                "facestream_alert_store_unreadable",
                "Alert records that failed their schema (dead-lettered)",
                self.unreadable,
            ),
            ("facestream_alert_store_forgotten", "Alerts forgotten past the retention", self.forgotten),
            ("facestream_alert_store_sightings", "Faces with an embedding new to the database", self.sightings),
            (
                "facestream_alert_store_sightings_forgotten",
                "Sightings forgotten past their retention",
                self.sightings_forgotten,
            ),
            (
                "facestream_alert_store_images_dropped",
                "Snapshot images dropped over the size limit",
                self.images_dropped,
            ),
        ):
            yield CounterMetricFamily(name, help_text, value=value)
        shots = CounterMetricFamily(
            "facestream_alert_store_snapshots", "Snapshots stored, by status", labels=["status"]
        )
        for status, count in sorted(self.snapshots.items()):
            shots.add_metric([status], count)
        yield shots


def run(config: AlertStoreConfig, bootstrap: str | None = None) -> StoreStats:
    bootstrap = bootstrap or kafka_clients.bootstrap_servers()
    kafka_clients.check_reachable(bootstrap)
    url = config.database or default_url()
    stats = StoreStats(keeps_sightings=config.sightings)
    readiness = health.Readiness("database_open", "partitions_assigned")
    if config.http_port:
        registry = CollectorRegistry()
        registry.register(stats)
        health.serve(readiness, registry, config.http_port, config.http_host)
    database = open_database(url)
    writer = AlertWriter(database, config.group, config.same_stranger)
    sightings = SightingWriter(database, config.group) if config.sightings else None
    readiness.mark("database_open")
    kafka_topics.ensure_topics({config.dead_letter_topic: 1}, bootstrap)
    log.info("alert store %s: %s -> %s", config.group, ", ".join(config.topics), redact(url))
    stop = threading.Event()
    snapshots = threading.Thread(target=_snapshots, args=(writer, config, stats, stop), name="snapshots", daemon=True)
    snapshots.start()
    try:
        _consume(writer, sightings, config, bootstrap, stats, readiness)
    finally:
        stop.set()
        snapshots.join(timeout=15)
        log.info("stopped: %s", stats.line())
    return stats


def _consume(
    writer: AlertWriter,
    sightings: SightingWriter | None,
    config: AlertStoreConfig,
    bootstrap: str,
    stats: StoreStats,
    readiness: health.Readiness,
) -> None:
    producer = kafka_clients.producer("facestream-alert-store", bootstrap)

    def write(messages: list) -> None:
        alerts = [msg for msg in messages if msg.topic() == config.alerts_topic]
        if alerts:
            written = writer.write(
                [Received(m.topic(), m.partition(), m.offset(), m.value() or b"", a) for m, a in readable(alerts)]
            )
            stats.kept += written.kept
            stats.repeats += written.repeats
        events = [msg for msg in messages if msg.topic() != config.alerts_topic]
        if events and sightings is not None:
            batch = [ReceivedEvent(m.topic(), m.partition(), m.offset(), e) for m, e in readable(events)]
            stats.sightings += sightings.write(batch).kept

    def readable(messages: list) -> list[tuple]:
        return _readable(messages, producer, config, stats)

    def prune() -> None:
        """One retention pass over every kind the database keeps, each recorded for the admin page."""
        forgotten, dropped = writer.prune(
            config.retention_days * DAY_S, int(config.max_snapshot_mb * 1e6), config.snapshot_days * DAY_S
        )
        stats.forgotten += forgotten
        stats.images_dropped += dropped
        kept = [
            ("alerts", config.retention_days, "alerts, alert_records, stranger_visits", forgotten),
            ("evidence", config.snapshot_days, "alert_snapshots", dropped),
        ]
        expired = audit.expire(writer.engine, time.time_ns() - int(config.audit_days * DAY_S * 1e9))
        kept.append(("audit", config.audit_days, "audit", expired))
        if sightings is not None:
            gone = len(sightings.prune(config.sightings_days * DAY_S, config.max_sightings))
            stats.sightings_forgotten += gone
            kept.append(("sightings", config.sightings_days, "sightings", gone))
        for kind, days, place, removed in kept:
            retention.applied(writer.engine, kind, days, place, config.group, removed)

    try:
        consume_into(
            bootstrap,
            config.group,
            config.topics,
            writer.positions,
            write,
            readiness,
            config.batch,
            config.stop_after_idle_s,
            (Every(config.prune_every_s, prune), Every(config.stats_interval_s, lambda: log.info("%s", stats.line()))),
            session_timeout_s=config.session_timeout_s,
        )
    finally:
        kafka_clients.flush(producer, config.dead_letter_topic, 10)


def _readable(messages: list, producer, config: AlertStoreConfig, stats: StoreStats) -> list[tuple]:
    """(message, what it holds) for each of ``messages`` of one topic; an unreadable one (None)
    dead-lettered and acknowledged first: its offset is stored with the batch."""
    unpack = unpack_alert if messages[0].topic() == config.alerts_topic else unpack_detection
    out: list[tuple[Any, Alert | DetectionEvent | None]] = []
    dead = 0
    for msg in messages:
        stats.records += 1
        value = msg.value() or b""
        try:
            out.append((msg, unpack(value)))
        except SchemaError as exc:
            out.append((msg, None))
            stats.unreadable += 1
            dead += 1
            log.warning("unreadable record at %s/%d@%d: %s", msg.topic(), msg.partition(), msg.offset(), exc)
            headers = kafka_clients.dead_letter_headers(msg, "schema", exc, config.group)
            kafka_clients.send(producer, config.dead_letter_topic, value, msg.key(), headers=headers)
    if dead and kafka_clients.flush(producer, config.dead_letter_topic, 30) > 0:
        raise BrokerError(f"dead letters not acknowledged by Kafka within 30 s ({config.dead_letter_topic})")
    return out


def _snapshots(writer: AlertWriter, config: AlertStoreConfig, stats: StoreStats, stop: threading.Event) -> None:
    """Read back each stored alert's evidence frame once, and keep it (or say it is gone)."""
    while not stop.is_set():
        pending = writer.without_snapshot(SNAPSHOT_BATCH)
        for alert in pending:
            if stop.is_set():
                return
            try:
                jpeg = evidence_jpeg(alert, config.frames_topics) if alert.evidence else None
            except Exception as exc:  # Kafka away: this alert and the rest on a later pass
                log.warning("snapshot of alert %s not read: %s", alert.alert_id, exc)
                pending = []
                break
            status = "kept" if jpeg else ("gone" if alert.evidence else "none")
            writer.keep_snapshot(alert.alert_id, status, jpeg)
            stats.snapshots[status] = stats.snapshots.get(status, 0) + 1
        if not pending:  # nothing to do, or Kafka away: not a busy loop
            stop.wait(SNAPSHOT_IDLE_S)
