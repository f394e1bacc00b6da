"""A consumer whose positions live in a database (Kafka Connect's sink pattern): on every assignment it
starts where its rows say, each batch is handed to ``write``, which stores the rows and the offsets past
them in one transaction, and Kafka's committed offsets are set afterwards only for the lag others show.
The alert store and the notifier both run on it."""

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from facestream import health, kafka_clients
from facestream.signals import StopOnSignals

log = logging.getLogger(__name__)


@dataclass
class Every:
    """Something to run now and then between batches (retention, a stats line)."""

    interval_s: float
    run: Callable[[], None]
    due: float = 0.0


def consume_into(
    bootstrap: str,
    group: str,
    topics: tuple[str, ...],
    positions: Callable[[str], dict[int, int]],
    write: Callable[[list], None],
    readiness: health.Readiness,
    batch: int,
    stop_after_idle_s: float | None = None,
    every: tuple[Every, ...] = (),
    session_timeout_s: float = kafka_clients.SESSION_TIMEOUT_S,
) -> None:
    """Consume ``topics`` as a member of ``group`` until SIGINT/SIGTERM (or ``stop_after_idle_s`` seconds
    without records, counted from the latest assignment: a member that joins while a killed one still
    holds the partitions waits out its session before it gets any), ``write``-ing each batch of
    messages (none with an error)."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer

    assigned_at: float | None = None  # when partitions last came; None while this member has none

    def assigned(consumer, partitions) -> None:
        nonlocal assigned_at
        assigned_at = time.monotonic() if partitions else None
        stored = {topic: positions(topic) for topic in {tp.topic for tp in partitions}}
        for tp in partitions:
            tp.offset = stored[tp.topic].get(tp.partition, OFFSET_BEGINNING)
        consumer.assign(partitions)
        readiness.mark("partitions_assigned", bool(partitions))
        log.info("assigned %s", ", ".join(f"{tp.topic}/{tp.partition}@{tp.offset}" for tp in partitions) or "nothing")

    settings = {
        "group.id": group,
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        **kafka_clients.membership(session_timeout_s),
    }
    consumer = kafka_clients.made(Consumer, kafka_clients.client_config(bootstrap, **settings))
    consumer.subscribe(list(topics), on_assign=assigned)
    last_record = time.monotonic()
    try:
        with StopOnSignals("finishing the batch, then stopping") as stop:
            while not stop.requested:
                messages = []
                for msg in consumer.consume(batch, 0.5):
                    if msg.error():
                        kafka_clients.check_allowed(msg.error(), f"read {', '.join(topics)} in group {group}")
                        log.warning("consumer: %s", msg.error())
                    else:
                        messages.append(msg)
                now = time.monotonic()
                if messages:
                    write(messages)
                    consumer.commit(asynchronous=True)  # for the lag others show; the rows are the truth
                    last_record = now
                elif stop_after_idle_s is not None and assigned_at is not None:
                    idle = now - max(last_record, assigned_at)
                    if idle > stop_after_idle_s:
                        log.info("no records for %g s: stopping", stop_after_idle_s)
                        break
                for task in every:
                    if now >= task.due:
                        task.due = now + task.interval_s
                        task.run()
    finally:
        consumer.close()
