"""The notifier: a sink consumer of the alerts topic (``alertdb.sink``) that decides, for every target,
what each batch of records owes it (``rules``) and keeps that in the outbox with the offsets, while a
sender per target (``delivery``) delivers what is owed."""

import logging
import time
from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from facestream import health, kafka_clients
from facestream.alertdb import default_url, open_database, queries
from facestream.alertdb.outbox import Outbox
from facestream.alertdb.sink import Every, consume_into
from facestream.alertdb.writer import Received
from facestream.evidence import evidence_jpeg
from facestream.notifier import rules
from facestream.notifier.config import NotifierConfig, masked
from facestream.notifier.delivery import Sender
from facestream.redact import redact
from facestream.schemas import SchemaError, unpack_alert

log = logging.getLogger(__name__)
DRAIN_S = 60.0  # with stop_after_idle_s: how long senders get to deliver what is owed


@dataclass
class NotifierStats:
    records: int = 0
    unreadable: int = 0
    owed: int = 0  # messages the records owed the targets
    senders: dict = field(default_factory=dict)  # target -> Sender

    def line(self) -> str:
        targets = " ".join(f"{n}=sent {s.stats.sent}, failed {s.stats.failures}" for n, s in self.senders.items())
        return f"records {self.records}, unreadable {self.unreadable}, owed {self.owed} | {targets}"


class NotifierCollector:
    def __init__(self, stats: NotifierStats, outbox: Outbox) -> None:
        self.stats, self.outbox = stats, outbox

    def collect(self):
        yield CounterMetricFamily("facestream_notify_records", "Alert records read", value=self.stats.records)
        yield CounterMetricFamily(
            "facestream_notify_unreadable", "Alert records that failed their schema", value=self.stats.unreadable
        )
        sent = CounterMetricFamily("facestream_notify_sent", "Messages a target took", labels=["target"])
        failed = CounterMetricFamily("facestream_notify_failures", "Failed attempts at a target", labels=["target"])
        for name, sender in self.stats.senders.items():
            sent.add_metric([name], sender.stats.sent)
            failed.add_metric([name], sender.stats.failures)
        pending = GaugeMetricFamily("facestream_notify_pending", "Messages owed and not sent yet", labels=["target"])
        for (target, status), count in self.outbox.counts().items():
            if status == "pending":
                pending.add_metric([target], count)
        held = CounterMetricFamily(
            "facestream_notify_held", "Records held back by a target's rules", labels=["target", "why"]
        )
        for (target, why), count in self.outbox.held().items():
            held.add_metric([target, why], count)
        yield from (sent, failed, pending, held)


def run(config: NotifierConfig, bootstrap: str | None = None) -> NotifierStats:
    bootstrap = bootstrap or kafka_clients.bootstrap_servers()
    kafka_clients.check_reachable(bootstrap)
    targets = config.target_settings()
    url = config.database or default_url()
    engine = open_database(url)
    outbox = Outbox(engine, config.group)
    stats = NotifierStats()
    readiness = health.Readiness("partitions_assigned")
    if config.http_port:
        registry = CollectorRegistry()
        registry.register(NotifierCollector(stats, outbox))
        health.serve(readiness, registry, config.http_port, config.http_host)

    def snapshot(alert) -> bytes | None:
        """The store's snapshot of the alert, else its evidence frame read back from Kafka now."""
        return queries.snapshot(engine, alert.alert_id) or evidence_jpeg(alert, config.frames_topics)

    for name, settings in targets.items():
        stats.senders[name] = Sender(name, settings, outbox, snapshot, config.dashboard_url, config.retry_max_s).start()
    described = ", ".join(f"{n} ({masked(s.url)})" for n, s in targets.items())
    log.info("notifier %s: %s -> %s; outbox %s", config.group, config.alerts_topic, described, redact(url))

    def decide(target: str, state: dict, alert) -> dict | None:
        """The note of the message the record owes ``target``, or None when it owes none."""
        settings = targets[target]
        if not rules.wants(alert, settings):
            return None
        if settings.mqtt_state:
            return {"open": rules.track_open(state, alert)}
        return {} if rules.decide(state, alert, settings) is None else None

    def write(messages: list) -> None:
        batch = []
        for msg in messages:
            stats.records += 1
            try:
                alert = unpack_alert(msg.value() or b"")
            except SchemaError as exc:  # the alert store dead-letters it; here it is only passed
                alert = None
                stats.unreadable += 1
                log.warning("unreadable alert record at %s/%d@%d: %s", msg.topic(), msg.partition(), msg.offset(), exc)
            batch.append(Received(msg.topic(), msg.partition(), msg.offset(), msg.value() or b"", alert))
        stats.owed += outbox.take(batch, list(targets), decide)

    try:
        consume_into(
            bootstrap,
            config.group,
            (config.alerts_topic,),
            outbox.positions,
            write,
            readiness,
            config.batch,
            config.stop_after_idle_s,
            (Every(config.stats_interval_s, lambda: log.info("%s", stats.line())),),
            session_timeout_s=config.session_timeout_s,
        )
        if config.stop_after_idle_s is not None:
            _drain(stats)
    finally:
        for sender in stats.senders.values():
            sender.stop()
        log.info("stopped: %s", stats.line())
    return stats


def _drain(stats: NotifierStats) -> None:
    """Give the senders a moment to deliver what is owed (a target that stays down keeps its messages)."""
    deadline = time.monotonic() + DRAIN_S
    while time.monotonic() < deadline and any(s.stats.busy for s in stats.senders.values()):
        time.sleep(0.5)
