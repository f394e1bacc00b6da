"""The store: a sink consumer (``alertdb.sink``: positions from the database, each batch of records
written with the offsets past it in one transaction); an unreadable record dead-lettered (and
acknowledged) before its offset is; snapshots read back from the frames topics by a thread of their
own; retention now and then. With ``--sightings`` it also reads the detections topic and keeps every
face that carries an embedding (``alertdb.sightings``), for search by face."""

import logging
import threading
import time
from dataclasses import dataclass
from typing import Any

from facestream import health, kafka_clients, kafka_topics
from facestream.alert_store.config import AlertStoreConfig
from facestream.alertdb import audit, default_url, open_database, retention
from facestream.alertdb.sightings import ReceivedEvent, SightingWriter
from facestream.alertdb.sink import Sink
from facestream.alertdb.writer import AlertWriter, Received
from facestream.counters import Counters, counter
from facestream.errors import BrokerError
from facestream.evidence import evidence_jpeg
from facestream.redact import redact
from facestream.schemas import Alert, DetectionEvent, SchemaError, unpack_alert, unpack_detection
from facestream.service import Every

log = logging.getLogger(__name__)
DAY_S = 86400
SNAPSHOT_BATCH = 20  # alerts whose snapshots are looked for per pass
SNAPSHOT_IDLE_S = 1.0


@dataclass(eq=False)  # a collector in a registry: hashed by identity
class StoreStats(Counters):
    records: int = counter("records", "facestream_alert_store_records", "Alert records read from Kafka")
    kept: int = counter("kept", "facestream_alert_store_kept", "Alert records new to the database")
    repeats: int = counter(
        "repeats", "facestream_alert_store_repeats", "Alert records the database already had (a repeat, a replay)"
    )
    unreadable: int = counter(
        "unreadable", "facestream_alert_store_unreadable", "Alert records that failed their schema (dead-lettered)"
    )
    snapshots: dict = counter(
        "snapshots", "facestream_alert_store_snapshots", "Snapshots stored, by status", labels=("status",)
    )
    forgotten: int = counter("forgotten", "facestream_alert_store_forgotten", "Alerts forgotten past the retention")
    images_dropped: int = counter(
        "images dropped", "facestream_alert_store_images_dropped", "Snapshot images dropped over the size limit"
    )
    sightings: int = counter(
        "sightings", "facestream_alert_store_sightings", "Faces with an embedding new to the database"
    )
    sightings_forgotten: int = counter(
        "sightings forgotten", "facestream_alert_store_sightings_forgotten", "Sightings forgotten past their retention"
    )


def run(config: AlertStoreConfig, bootstrap: str | None = None) -> StoreStats:
    return AlertStore(config, bootstrap).run()


class AlertStore(Sink):
    """Alert records (and, with ``--sightings``, detection events) into the database."""

    def __init__(self, config: AlertStoreConfig, bootstrap: str | None = None) -> None:
        self.config, self.stats = config, StoreStats()
        readiness = health.Readiness("database_open", "partitions_assigned")
        super().__init__(config.topics, self._positions, bootstrap, readiness, self.stats, config)
        self.registry.register(self.stats)
        self._stop_snapshots = threading.Event()
        self.snapshots: threading.Thread | None = None
        self.producer = None

    def on_start(self) -> None:
        config = self.config
        url = config.database or default_url()
        database = open_database(url)
        self.writer = AlertWriter(database, config.group, config.same_stranger)
        self.sightings = SightingWriter(database, config.group) if config.sightings else None
        self.readiness.mark("database_open")
        kafka_topics.ensure_topics({config.dead_letter_topic: 1}, self.bootstrap)
        self.producer = kafka_clients.producer("facestream-alert-store", self.bootstrap)
        log.info("alert store %s: %s -> %s", config.group, ", ".join(config.topics), redact(url))
        self.snapshots = threading.Thread(
            target=_snapshots,
            args=(self.writer, config, self.stats, self._stop_snapshots),
            name="snapshots",
            daemon=True,
        )
        self.snapshots.start()

    def on_stop(self, failed: bool) -> None:
        self._stop_snapshots.set()
        if self.snapshots is not None:
            self.snapshots.join(timeout=15)
        if self.producer is not None:
            kafka_clients.flush(self.producer, self.config.dead_letter_topic, 10)

    def timers(self) -> list[Every]:
        return [Every(self.config.prune_every_s, self._prune)]

    def _positions(self, topic: str) -> dict[int, int]:
        return self.writer.positions(topic)

    def handle(self, messages: list) -> None:
        config, stats = self.config, self.stats
        alerts = [msg for msg in messages if msg.topic() == config.alerts_topic]
        if alerts:
            written = self.writer.write(
                [Received(m.topic(), m.partition(), m.offset(), m.value() or b"", a) for m, a in self._readable(alerts)]
            )
            stats.kept += written.kept
            stats.repeats += written.repeats
        events = [msg for msg in messages if msg.topic() != config.alerts_topic]
        if events and self.sightings is not None:
            batch = [ReceivedEvent(m.topic(), m.partition(), m.offset(), e) for m, e in self._readable(events)]
            stats.sightings += self.sightings.write(batch).kept

    def _readable(self, messages: list) -> list[tuple]:
        return _readable(messages, self.producer, self.config, self.stats)

    def _prune(self) -> None:
        """One retention pass over every kind the database keeps, each recorded for the admin page."""
        config, writer, stats = self.config, self.writer, self.stats
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
        if self.sightings is not None:
            gone = len(self.sightings.prune(config.sightings_days * DAY_S, config.max_sightings))
            stats.sightings_forgotten += gone
            kept.append(("sightings", config.sightings_days, "sightings", gone))
        for kind, days, place, removed in kept:
            retention.applied(writer.engine, kind, days, place, config.group, removed)


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
            writer.keep_snapshot(alert.alert_id, status, jpeg, alert.evidence[0].box if jpeg else None)
            stats.add("snapshots", status)
        if not pending:  # nothing to do, or Kafka away: not a busy loop
            stop.wait(SNAPSHOT_IDLE_S)
