"""One life for every service that reads its topics as a consumer group (the detector, the alerting
workers, the alert store, the notifier), as Faust's ``mode.Service`` gives its services one.

``Service.run``: the broker checked; ``/healthz``, ``/readyz`` and ``/metrics`` served (from before
the start, which may take minutes: a model's warm-up); ``on_start``; the group member joined; then
the loop -- a batch consumed, handled, committed -- with the declared timers between batches (the
stats line among them) until SIGINT/SIGTERM or the idle limit; then ``on_stop`` and the member's
goodbye, however the loop ended. A service supplies its member (with its assignment hooks), its
handler, and what it starts and stops; its counters go on the stats line and to Prometheus from one
declaration (``facestream.counters``).
"""

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from prometheus_client import CollectorRegistry

from facestream import health, kafka_clients
from facestream.consumer_group import GroupMember
from facestream.signals import StopOnSignals

log = logging.getLogger(__name__)


@dataclass
class Every:
    """Something to run now and then between batches (a stats line, retention, a silence check); an
    interval of 0 turns it off, as the settings say of theirs."""

    interval_s: float
    run: Callable[[], None]
    due: float = 0.0

    def tick(self, now: float) -> None:
        if self.interval_s and now >= self.due:
            self.due = now + self.interval_s
            self.run()


class Service:
    """A group member's life. Subclasses give ``join`` and ``handle``, and may give ``on_start``,
    ``on_stop``, ``timers``, and their own ``next_batch``, ``busy`` and ``commit``."""

    stopping = "finishing the batch, then stopping"  # what a signal is answered with

    def __init__(
        self,
        bootstrap: str | None,
        readiness: health.Readiness,
        stats: Any,
        settings: Any,
        *,
        batch: int = 500,
        wait_s: float = 0.5,
    ) -> None:
        """``settings``: the service's config, whose common settings (``facestream.config``'s
        ``http_port_setting`` and the like) the life reads: ``http_port``, ``http_host``,
        ``stats_interval_s`` and, if it has one, ``stop_after_idle_s``."""
        self.bootstrap = bootstrap or kafka_clients.bootstrap_servers()
        self.readiness, self.stats = readiness, stats
        self.http_port, self.http_host = settings.http_port, settings.http_host
        self.stats_interval_s = settings.stats_interval_s
        self.stop_after_idle_s: float | None = getattr(settings, "stop_after_idle_s", None)
        self.batch, self.wait_s = batch, wait_s
        self.registry = CollectorRegistry()  # the service registers its collectors when it has them
        self.member: Any = None  # the GroupMember, once joined

    # -- what a service supplies ---------------------------------------------------------------------

    def join(self) -> GroupMember:
        """The group member on the service's topics, with its assignment hooks and ``owned`` for
        ``on_ownership``."""
        raise NotImplementedError

    def handle(self, messages: list) -> None:
        """One batch (none with an error), its writes acknowledged before it returns: a commit follows."""
        raise NotImplementedError

    def on_start(self) -> None:
        """Before the member joins: topics made, stores opened, threads and models started."""

    def on_stop(self, failed: bool) -> None:
        """After the last batch, however the loop ended (``failed``: by an exception), before the
        member leaves the group."""

    def timers(self) -> list[Every]:
        """What runs between batches besides the stats line."""
        return []

    def next_batch(self) -> list:
        return self.member.readable(self.member.consume(self.batch, self.wait_s))

    def busy(self) -> bool:
        """Whether something is in hand that a turn without records must still finish (a batch in flight)."""
        return False

    def commit(self) -> None:
        """After each turn: the offsets of what was handled (asynchronous; nothing new is no commit)."""
        self.member.commit()

    # -- the life ------------------------------------------------------------------------------------

    def owned(self, owns: bool) -> None:
        """The member's ``on_ownership``: ready while it holds partitions."""
        self.readiness.mark("partitions_assigned", owns)

    def run(self) -> Any:
        """Serve until SIGINT/SIGTERM (or idle, if asked); the service's counters at the end."""
        kafka_clients.check_reachable(self.bootstrap)
        if self.http_port:
            health.serve(self.readiness, self.registry, self.http_port, self.http_host)
        with StopOnSignals(self.stopping) as stop:  # a stop asked for during the start is kept for the loop
            failed = True
            try:
                self.on_start()
                self.member = self.join()
                self.registry.register(self.member)  # its partitions' lag
                self._loop(stop)
                failed = False
            finally:
                self.on_stop(failed)
                if self.member is not None:  # a batch that failed is left to be read again: no last commit
                    self.member.close(commit=not failed)
                if self.stats is not None:  # (a service whose start failed may have none yet)
                    log.info("stopped: %s", self.stats.line())
        return self.stats

    def _loop(self, stop: StopOnSignals) -> None:
        first_line = time.monotonic() + self.stats_interval_s
        timers = [*self.timers(), Every(self.stats_interval_s, self._say_stats, first_line)]
        last_busy = time.monotonic()
        while not stop.requested:
            messages = self.next_batch()
            if messages or self.busy():
                self.handle(messages)
                last_busy = time.monotonic()
            elif self._idle_since(last_busy):
                log.info("no records for %g s: stopping as asked", self.stop_after_idle_s)
                break
            self.commit()
            now = time.monotonic()
            for timer in timers:
                timer.tick(now)

    def _say_stats(self) -> None:
        level = logging.WARNING if getattr(self.stats, "warning", None) else logging.INFO
        log.log(level, "%s", self.stats.line())

    def _idle_since(self, last_busy: float) -> bool:
        """Idle time counts from the last batch handled, never from before the latest assignment (a
        member that joins while a killed one still holds the partitions waits out its session), nor
        while partitions lost with the broker are not back yet."""
        limit, assigned_at = self.stop_after_idle_s, self.member.assigned_at
        if limit is None or assigned_at is None or self.member.waiting_to_rejoin:
            return False
        return time.monotonic() - max(last_busy, assigned_at) >= limit
