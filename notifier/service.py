"""The notifier: a sink consumer of the alerts topic (``alertdb.sink``) that decides, for every target,
what each batch of records owes it (``rules``) and keeps that in the outbox with the offsets, while a
sender per target (``delivery``) delivers what is owed."""

import logging
import time
from dataclasses import dataclass, field

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from facestream import health
from facestream.alertdb import default_url, open_database, queries
from facestream.alertdb.outbox import Outbox
from facestream.alertdb.sink import Sink
from facestream.alertdb.writer import Received
from facestream.counters import Counters, counter, per_object
from facestream.evidence import evidence_jpeg
from facestream.notifier import rules
from facestream.notifier.config import NotifierConfig, masked
from facestream.notifier.delivery import Sender, SenderStats
from facestream.redact import redact
from facestream.schemas import SchemaError, unpack_alert

log = logging.getLogger(__name__)
DRAIN_S = 60.0  # with stop_after_idle_s: how long senders get to deliver what is owed


@dataclass(eq=False)  # a collector in a registry: hashed by identity
class NotifierStats(Counters):
    records: int = counter("records", "facestream_notify_records", "Alert records read")
    unreadable: int = counter("unreadable", "facestream_notify_unreadable", "Alert records that failed their schema")
    owed: int = counter("owed", "facestream_notify_owed", "Messages the records owed the targets")
    senders: dict = field(default_factory=dict)  # target -> Sender

    def line(self) -> str:
        targets = " | ".join(f"{name}: {sender.stats.counted()}" for name, sender in self.senders.items())
        return f"{self.counted()} | {targets}"


class TargetsCollector:
    """What each target's sender counts (as ``SenderStats`` declares it) and the outbox keeps: messages
    pending, records held back."""

    def __init__(self, stats: NotifierStats, outbox: Outbox) -> None:
        self.stats, self.outbox = stats, outbox

    def collect(self):
        yield from per_object(SenderStats, {name: s.stats for name, s in self.stats.senders.items()}, "target")
        pending = GaugeMetricFamily("facestream_notify_pending", "Messages owed and not sent yet", labels=["target"])
        for (target, status), count in self.outbox.counts().items():
            if status == "pending":
                pending.add_metric([target], count)
        held = CounterMetricFamily(
            "facestream_notify_held", "Records held back by a target's rules", labels=["target", "why"]
        )
        for (target, why), count in self.outbox.held().items():
            held.add_metric([target, why], count)
        yield from (pending, held)


def run(config: NotifierConfig, bootstrap: str | None = None) -> NotifierStats:
    return Notifier(config, bootstrap).run()


class Notifier(Sink):
    """Decides what each batch of alert records owes every target, and keeps it in the outbox."""

    def __init__(self, config: NotifierConfig, bootstrap: str | None = None) -> None:
        self.config, self.stats = config, NotifierStats()
        self.targets = config.target_settings()
        self.url = config.database or default_url()
        self.engine = open_database(self.url)
        self.outbox = Outbox(self.engine, config.group)
        readiness = health.Readiness("partitions_assigned")
        super().__init__((config.alerts_topic,), self.outbox.positions, bootstrap, readiness, self.stats, config)
        self.registry.register(self.stats)
        self.registry.register(TargetsCollector(self.stats, self.outbox))

    def on_start(self) -> None:
        config = self.config
        for name, settings in self.targets.items():
            sender = Sender(name, settings, self.outbox, self._snapshot, config.dashboard_url, config.retry_max_s)
            self.stats.senders[name] = sender.start()
        described = ", ".join(f"{n} ({masked(s.url)})" for n, s in self.targets.items())
        log.info("notifier %s: %s -> %s; outbox %s", config.group, config.alerts_topic, described, redact(self.url))

    def on_stop(self, failed: bool) -> None:
        if not failed and self.config.stop_after_idle_s is not None:
            _drain(self.stats)
        for sender in self.stats.senders.values():
            sender.stop()

    def _snapshot(self, alert) -> bytes | None:
        """The store's snapshot of the alert, else its evidence frame read back from Kafka now."""
        return queries.snapshot(self.engine, alert.alert_id)[0] or evidence_jpeg(alert, self.config.frames_topics)

    def _decide(self, target: str, state: dict, alert) -> dict | None:
        """The note of the message the record owes ``target``, or None when it owes none."""
        settings = self.targets[target]
        if not rules.wants(alert, settings):
            return None
        if settings.mqtt_state:
            return {"open": rules.track_open(state, alert)}
        return {} if rules.decide(state, alert, settings) is None else None

    def handle(self, messages: list) -> None:
        batch = []
        for msg in messages:
            self.stats.records += 1
            try:
                alert = unpack_alert(msg.value() or b"")
            except SchemaError as exc:  # the alert store dead-letters it; here it is only passed
                alert = None
                self.stats.unreadable += 1
                log.warning("unreadable alert record at %s/%d@%d: %s", msg.topic(), msg.partition(), msg.offset(), exc)
            batch.append(Received(msg.topic(), msg.partition(), msg.offset(), msg.value() or b"", alert))
        self.stats.owed += self.outbox.take(batch, list(self.targets), self._decide)


def _drain(stats: NotifierStats) -> None:
    """Give the senders a moment to deliver what is owed (a target that stays down keeps its messages)."""
    deadline = time.monotonic() + DRAIN_S
    while time.monotonic() < deadline and any(s.stats.busy for s in stats.senders.values()):
        time.sleep(0.5)
