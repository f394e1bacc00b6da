"""A guard against a table recovery that stops reading.

When partitions move, faust rebuilds their cameras' state by reading the table's changelog. Rarely (one
takeover in many, after a worker died while its survivor was mid-batch) that reading receives nothing at
all and the partitions wait for good, their cameras' alerts never ending. The guard watches how far the
recovery has read; when it has not moved for ``stall_s`` while records remain, the worker says so, counts
it, and asks its consumer group for a fresh rebalance, whose recovery starts again from the beginning.
"""

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

import faust

log = logging.getLogger(__name__)
CHECK_S = 5.0  # how often the guard looks


@dataclass
class StallClock:
    """How long the recovery's read offsets have stood still; the guard's decision, free of faust."""

    stall_s: float
    _offsets: tuple = ()
    _since: float = field(default_factory=time.monotonic)

    def stalled(self, recovering: bool, offsets: Mapping, now: float) -> bool:
        """Whether to start the recovery again: it has read nothing for ``stall_s`` (then the clock
        restarts, so a rebalance is asked for at most once per ``stall_s``)."""
        read = tuple(sorted(offsets.items()))
        if not recovering or read != self._offsets:
            self._offsets, self._since = read, now
            return False
        if now - self._since < self.stall_s:
            return False
        self._since = now
        return True


def watch(app: faust.App, stall_s: float, on_restart) -> None:
    """Start the guard on ``app``: a timer that asks for a rebalance when its recovery has stalled, and
    calls ``on_restart()`` (the worker's count) each time."""
    clock = StallClock(stall_s)

    @app.timer(CHECK_S)
    async def recovery_guard() -> None:
        recovery = app.tables.recovery
        recovering = recovery.in_recovery and recovery.active_remaining_total() > 0
        if clock.stalled(recovering, recovery.active_offsets, time.monotonic()):
            log.error(
                "table recovery has read nothing for %.0f s with %d changelog records to go (%s): asking the "
                "group for a fresh rebalance",
                stall_s,
                recovery.active_remaining_total(),
                ", ".join(f"{tp.topic}[{tp.partition}]" for tp, n in recovery.active_remaining().items() if n),
            )
            on_restart()
            _rejoin(app)


def _rejoin(app: faust.App) -> None:
    """Have the worker's consumer rejoin its group (faust has no public call for it: its Kafka consumer
    lives on a thread of its own, where the request must be made)."""
    thread = app.consumer._thread
    coordinator = thread._ensure_consumer()._coordinator
    thread.thread_loop.call_soon_threadsafe(coordinator.request_rejoin)
