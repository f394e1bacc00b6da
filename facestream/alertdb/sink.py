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
    from facestream.consumer_group import GroupMember

    member = GroupMember(
        bootstrap,
        group,
        list(topics),
        f"{group}-sink",
        strategy="range",
        positions=positions,
        session_timeout_s=session_timeout_s,
        on_ownership=lambda owns: readiness.mark("partitions_assigned", owns),
    )
    last_record = time.monotonic()
    try:
        with StopOnSignals("finishing the batch, then stopping") as stop:
            while not stop.requested:
                messages = member.readable(member.consume(batch, 0.5))
                now = time.monotonic()
                if messages:
                    write(messages)
                    member.commit()  # for the lag others show; the rows are the truth
                    last_record = now
                elif stop_after_idle_s is not None and member.assigned and member.assigned_at is not None:
                    idle = now - max(last_record, member.assigned_at)
                    if idle > stop_after_idle_s:
                        log.info("no records for %g s: stopping", stop_after_idle_s)
                        break
                for task in every:
                    if now >= task.due:
                        task.due = now + task.interval_s
                        task.run()
    finally:
        member.close()
