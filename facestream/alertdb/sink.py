"""A consumer whose positions live in a database (Kafka Connect's sink pattern): on every assignment it
starts where its rows say, each batch is handed to ``handle``, which stores the rows and the offsets
past them in one transaction, and Kafka's committed offsets are set afterwards only for the lag others
show. The alert store and the notifier are sinks."""

from collections.abc import Callable
from typing import Any

from facestream import health
from facestream.consumer_group import GroupMember
from facestream.service import Service


class Sink(Service):
    """A ``Service`` on ``topics`` whose member starts each partition at ``positions(topic)``; its
    group, session timeout and batch size come from ``settings`` (the service's config)."""

    def __init__(
        self,
        topics: tuple[str, ...],
        positions: Callable[[str], dict[int, int]],
        bootstrap: str | None,
        readiness: health.Readiness,
        stats: Any,
        settings: Any,
    ) -> None:
        super().__init__(bootstrap, readiness, stats, settings, batch=settings.batch)
        self.group, self.topics, self.positions = settings.group, topics, positions
        self.session_timeout_s: float = settings.session_timeout_s

    def join(self) -> GroupMember:
        return GroupMember(
            self.bootstrap,
            self.group,
            list(self.topics),
            f"{self.group}-sink",
            strategy="range",
            positions=self.positions,
            session_timeout_s=self.session_timeout_s,
            on_ownership=self.owned,
        )
