"""One member of a Kafka consumer group, the same for every service that consumes as a group (the
detector, the alerting workers, the alert store and the notifier): one assignment and revocation
path, one commit-after-acknowledge with retries, one stuck-member policy. The service keeps its own
loop and decides what a record does; this module decides what a member does when the group changes.

- **Where a partition starts.** A partition the group committed resumes after its commit. One it
  never committed starts at ``start_at`` (earliest, latest) or ``start_back_s`` seconds back from now;
  a member whose positions live elsewhere (a sink that keeps them in its database beside its rows)
  gives ``positions`` instead, asked at each assignment.
- **Commits** come after the records they cover were acknowledged (the caller commits after its
  writes landed). ``commit()`` without offsets commits the consumer's positions; one that fails (the
  coordinator moved, a rebalance under way) is made again ``COMMIT_RETRY_S`` later from ``consume``.
  A caller that commits offsets of its own (the detector's tracker) hears every partition's answer
  through ``on_committed`` and offers the failed ones again itself.
- **Revocation** calls ``on_revoke`` while the partitions are still this member's (the detector
  commits what has landed), then forgets them; **loss** without a hand-over (the coordinator did not
  hear from the member in time) forgets them, warns that their records will be processed again, and
  calls ``on_lost``.
- **A stuck member** (``_rejoin_if_stuck``): one that lost its partitions and has none
  ``rejoin_after_s`` later (by default the longer of 30 s and 5 sessions), while the broker answers,
  makes a new consumer: librdkafka 2.16 has been seen to keep such a member's request to the group
  coordinator queued and never sent, so that it idled for good (a detector after a broker restart; an
  alerting worker after a rolling restart of a three-node cluster).
- **Slow work**: a batch that runs longer than a quarter of ``max.poll.interval.ms`` calls
  ``keep_alive``, which pauses the assigned partitions and polls, serving rebalances and proving the
  member alive without fetching records it could not start yet.
"""

import json
import logging
import threading
import time
from collections.abc import Callable

from prometheus_client.core import GaugeMetricFamily

from facestream import kafka_access, kafka_clients, kafka_reading
from facestream.errors import BrokerError

log = logging.getLogger(__name__)
IDLE_WARN_S = 10.0  # a member without partitions this long after a rebalance is told it idles
# A member that lost its partitions waits this many session timeouts (at least REJOIN_MIN_S) for them
# or others, while the broker answers, before it makes a new consumer.
REJOIN_SESSIONS = 5
REJOIN_MIN_S = 30.0
REACHABLE_EVERY_S = 5.0  # while waiting to rejoin past the limit: how often the broker is asked whether it is back
LAG_EVERY_S = 5.0  # how often librdkafka measures the lag of the partitions held (a poll hands it over)
COMMIT_RETRY_S = 1.0  # a failed commit of the positions is made again this much later
Partitions = list  # of confluent_kafka.TopicPartition


def _nothing(_partitions: Partitions) -> None:
    return None


class GroupMember:
    """A consumer-group member: subscribe, place, commit, hand over, rejoin (module docstring)."""

    def __init__(
        self,
        bootstrap: str,
        group: str,
        topics: str | list[str],
        client_id: str,
        *,
        strategy: str = "cooperative-sticky",
        start_at: str = "earliest",
        start_back_s: float | None = None,
        positions: Callable[[str], dict[int, int]] | None = None,
        session_timeout_s: float = kafka_clients.SESSION_TIMEOUT_S,
        rejoin_after_s: float | None = None,
        config: dict | None = None,
        on_assign: Callable[[Partitions], None] = _nothing,
        on_revoke: Callable[[Partitions], None] = _nothing,
        on_lost: Callable[[Partitions], None] = _nothing,
        on_committed: Callable[[tuple[str, int], int, bool], None] | None = None,
        on_ownership: Callable[[bool], None] = lambda owns: None,
        on_new_consumer: Callable[[], None] = lambda: None,
    ) -> None:
        """``on_assign`` runs before the first record of the partitions given (e.g. to restore their
        state), ``on_revoke`` before they go, ``on_lost`` after they were taken without a hand-over;
        ``on_ownership`` is told whether the member owns partitions after every change."""
        self.group, self.topics = group, [topics] if isinstance(topics, str) else list(topics)
        self.assigned: set[tuple[str, int]] = set()
        # Monotonic clock of the latest assignment (None: never assigned): partitions handed over
        # bring a backlog, so idleness counts from there.
        self.assigned_at: float | None = None
        self.lost_at: float | None = None  # monotonic clock of the latest loss without a hand-over
        self._bootstrap, self._start_back_s, self._positions = bootstrap, start_back_s, positions
        self._incremental = strategy == "cooperative-sticky"
        self._on_assign, self._on_revoke, self._on_lost = on_assign, on_revoke, on_lost
        self._on_committed, self._on_ownership, self._on_new_consumer = on_committed, on_ownership, on_new_consumer
        self.rejoin_limit_s = rejoin_after_s or max(REJOIN_MIN_S, REJOIN_SESSIONS * session_timeout_s)
        self._next_reachable_check = 0.0
        self._retry_commit_at: float | None = None  # when to commit the positions again after a failure
        self._paused: list = []
        self._held: list = []  # records a keep-alive poll returned (a partition assigned meanwhile)
        self._idle_since: float | None = None  # when the latest rebalance left this member without partitions
        self._config = kafka_clients.client_config(
            bootstrap,
            **{
                "group.id": group,
                "client.id": client_id,
                "enable.auto.commit": False,
                # A partition without a commit: start_back_s places it in _assigned instead.
                "auto.offset.reset": "latest" if start_back_s is not None else start_at,
                "partition.assignment.strategy": strategy,
                **kafka_clients.membership(session_timeout_s),
                # librdkafka's statistics, for the lag of each partition held (``collect``).
                "statistics.interval.ms": int(LAG_EVERY_S * 1000),
                **(config or {}),
                "on_commit": self._committed,
                "stats_cb": self._statistics,
            },
        )
        self.lag: dict[tuple[str, int], int] = {}  # records behind the partition's end, as last measured
        # A batch that has run a quarter of the poll interval gets keep-alive polls from then on.
        self.keep_alive_s = max(0.5, int(self._config.get("max.poll.interval.ms", 300_000)) / 4000)
        self.consumer = self._subscribed()

    def _subscribed(self):
        """A new consumer of the topics in the group, this member's callbacks registered."""
        from confluent_kafka import Consumer

        consumer = kafka_clients.made(Consumer, self._config)
        consumer.subscribe(self.topics, on_assign=self._assigned, on_revoke=self._revoked, on_lost=self._lost)
        self._made_at = time.monotonic()
        return consumer

    # -- the caller's loop ------------------------------------------------------------------

    def consume(self, max_messages: int, timeout_s: float) -> list:
        """Up to ``max_messages`` records (errors among them, as librdkafka gives them); between polls,
        the member's own duties: a commit to make again, an idle warning, a stuck consumer replaced."""
        self._say_if_idle()
        self._rejoin_if_stuck()
        if self._retry_commit_at is not None and time.monotonic() >= self._retry_commit_at:
            self._retry_commit_at = None
            self.commit()
        if self._held:
            taken, self._held = self._held[:max_messages], self._held[max_messages:]
            return taken
        return self.consumer.consume(num_messages=max_messages, timeout=timeout_s)

    def readable(self, messages: list) -> list:
        """``messages`` without the ones carrying an error: a refusal by the cluster's ACLs raises
        (BrokerError, saying what to grant), any other error is logged."""
        kept = []
        for msg in messages:
            if msg.error():
                kafka_access.check_allowed(msg.error(), f"read {', '.join(self.topics)} in group {self.group}")
                log.warning("consumer: %s", msg.error())
            else:
                kept.append(msg)
        return kept

    def keep_alive(self) -> None:
        """Poll without taking new records: pause what is assigned (once), then poll. A partition
        assigned during the poll is not paused yet, so whatever it brings is held for ``consume``."""
        from confluent_kafka import TopicPartition

        if not self._paused and self.assigned:
            self._paused = [TopicPartition(t, p) for t, p in sorted(self.assigned)]
            self.consumer.pause(self._paused)
        self._held.extend(self.consumer.consume(num_messages=1000, timeout=0))

    def resume(self) -> None:
        """Fetch again for the partitions ``keep_alive`` paused (from the first record not yet taken)."""
        still = [tp for tp in self._paused if (tp.topic, tp.partition) in self.assigned]
        self._paused = []
        if still:
            self.consumer.resume(still)

    def owns(self, msg) -> bool:
        return (msg.topic(), msg.partition()) in self.assigned

    def commit(self, offsets: dict[tuple[str, int], int] | None = None, asynchronous: bool = True) -> bool:
        """Commit ``offsets`` (of partitions still this member's), or the consumer's positions; the
        answer comes to ``_committed`` (from a later poll when asynchronous). Whether it was sent."""
        from confluent_kafka import KafkaException, TopicPartition

        try:
            if offsets is None:
                answer = self.consumer.commit(asynchronous=asynchronous)
            else:
                owned = [TopicPartition(t, p, o) for (t, p), o in offsets.items() if (t, p) in self.assigned]
                if not owned:
                    return False
                answer = self.consumer.commit(offsets=owned, asynchronous=asynchronous)
            if not asynchronous:
                self._committed(None, answer)
            return True
        except KafkaException as exc:
            if exc.args[0].name() == "_NO_OFFSET":  # nothing consumed since the last commit
                return False
            log.warning("offset commit failed, will retry: %s", exc.args[0].str())
            if offsets is None:
                self._retry_commit_at = time.monotonic() + COMMIT_RETRY_S
            return False

    def close(self, commit: bool = False) -> None:
        """Leave the group (the others take the partitions at once), after a last commit of the
        positions waited for, if ``commit``."""
        if commit and self.assigned:
            self.commit(asynchronous=False)
        self.consumer.close()

    @property
    def waiting_to_rejoin(self) -> bool:
        """Whether this member lost its partitions (e.g. the broker went away) and has had none since."""
        return not self.assigned and self.lost_at is not None and self.lost_at > (self.assigned_at or 0.0)

    # -- librdkafka's callbacks -------------------------------------------------------------

    def _statistics(self, report: str) -> None:
        """librdkafka's statistics (JSON, every LAG_EVERY_S, from a poll): each held partition's lag."""
        lag = {}
        for topic, held in json.loads(report).get("topics", {}).items():
            for partition, figures in held.get("partitions", {}).items():
                behind = figures.get("consumer_lag", -1)
                if partition != "-1" and behind >= 0 and (topic, int(partition)) in self.assigned:
                    lag[(topic, int(partition))] = behind
        self.lag = lag

    def collect(self):
        """The lag as Prometheus reads it: register the member in a service's registry."""
        family = GaugeMetricFamily(
            "facestream_consumer_lag",
            "Records between this member's position and the end of each partition it holds (librdkafka's measure)",
            labels=["group", "topic", "partition"],
        )
        for (topic, partition), behind in sorted(self.lag.items()):
            family.add_metric([self.group, topic, str(partition)], behind)
        yield family

    def _committed(self, error, partitions) -> None:
        """The broker's answer to a commit: each partition's to ``on_committed``; a failed commit of
        the positions is made again later."""
        if error is not None and error.name() == "_NO_OFFSET":  # nothing new to commit: no failure
            error = None
        failed = []
        for tp in partitions or []:
            ok = error is None and tp.error is None
            if self._on_committed is not None:
                self._on_committed((tp.topic, tp.partition), tp.offset, ok)
            if not ok:
                failed.append(f"{tp.topic}/{tp.partition}@{tp.offset}")
        if error is not None and not partitions:
            failed.append("all")
        if failed:
            log.warning("offset commit of %s failed (%s), will retry", ", ".join(failed), error or "per partition")
            if self._on_committed is None:
                self._retry_commit_at = time.monotonic() + COMMIT_RETRY_S

    def _assigned(self, consumer, partitions) -> None:
        if consumer is not self.consumer:  # a replaced consumer, closing
            return
        self.assigned |= {(p.topic, p.partition) for p in partitions}
        if partitions:
            self.assigned_at = time.monotonic()
        log.info("assigned %s", _names(partitions))
        # Cooperative rebalancing may hand a joining member nothing in its first round: only a member
        # still without partitions IDLE_WARN_S later is told that it idles.
        self._idle_since = None if self.assigned else (self._idle_since or time.monotonic())
        self._on_assign(partitions)
        if partitions and (self._positions is not None or self._start_back_s is not None):
            placed = self._placed(consumer, partitions)
            consumer.incremental_assign(placed) if self._incremental else consumer.assign(placed)
        self._on_ownership(bool(self.assigned))

    def _placed(self, consumer, partitions: Partitions) -> Partitions:
        """The partitions with their start: from ``positions`` (the member's own store), or placed
        ``start_back_s`` back where the group never committed."""
        from confluent_kafka import OFFSET_BEGINNING

        if self._positions is None:
            assert self._start_back_s is not None  # one or the other is what calls this
            return kafka_reading.placed_back(consumer, partitions, self._start_back_s)
        stored = {topic: self._positions(topic) for topic in {tp.topic for tp in partitions}}
        for tp in partitions:
            tp.offset = stored[tp.topic].get(tp.partition, OFFSET_BEGINNING)
        log.info("starting at %s", ", ".join(f"{tp.topic}/{tp.partition}@{tp.offset}" for tp in partitions))
        return partitions

    def _revoked(self, consumer, partitions) -> None:
        if consumer is not self.consumer:
            return
        log.info("revoked %s", _names(partitions))
        self._on_revoke(partitions)
        self._drop(partitions)

    def _lost(self, consumer, partitions) -> None:
        if consumer is not self.consumer:
            return
        log.warning("lost %s without a clean hand-over: their records will be processed again", _names(partitions))
        self.lost_at = time.monotonic()
        self._drop(partitions)
        self._on_lost(partitions)

    def _drop(self, partitions) -> None:
        self.assigned -= {(p.topic, p.partition) for p in partitions}
        self._on_ownership(bool(self.assigned))

    # -- the member's own duties --------------------------------------------------------------

    def _rejoin_if_stuck(self) -> None:
        """Replace the consumer when this member lost its partitions, has had none for
        ``rejoin_limit_s`` since (or since the last replacement) and the broker answers: the group would
        have taken it back by then. The old consumer is closed on a thread of its own (closing may wait
        on the very coordinator request that is stuck); its callbacks no longer reach this member."""
        if not self.waiting_to_rejoin:
            return
        now = time.monotonic()
        waited = now - max(self.lost_at or 0.0, self._made_at)
        if waited < self.rejoin_limit_s or now < self._next_reachable_check:
            return
        self._next_reachable_check = now + REACHABLE_EVERY_S
        try:
            kafka_clients.check_reachable(self._bootstrap, timeout_s=2.0)
        except BrokerError:
            return  # the broker is still away: the group cannot take anyone back yet
        log.warning(
            "no partitions %.0f s after losing them although the broker answers: making a new Kafka consumer "
            "to rejoin group %s (the old one's requests to the group coordinator went unanswered)",
            waited,
            self.group,
        )
        stuck, self.consumer = self.consumer, self._subscribed()
        self._paused, self._held, self._retry_commit_at = [], [], None
        threading.Thread(target=_close_quietly, args=(stuck,), name="close-stuck-consumer", daemon=True).start()
        self._on_new_consumer()

    def _say_if_idle(self) -> None:
        """A member left without partitions idles: a topic's partitions bound how many members share it.
        Said once per spell without partitions."""
        from confluent_kafka import KafkaException

        if self._idle_since is None or time.monotonic() - self._idle_since < IDLE_WARN_S:
            return
        self._idle_since = float("inf")  # warned once; a later assignment resets it
        topic = self.topics[0]
        try:
            count = str(len(self.consumer.list_topics(topic, timeout=5).topics[topic].partitions))
        except KafkaException:
            count = "?"
        log.warning(
            "this member of %s owns no partition of %s: the group has more members than the topic has partitions "
            "(%s), so it idles, not ready, until one is free (more members need more partitions)",
            self.group,
            topic,
            count,
        )


def _close_quietly(consumer) -> None:
    from confluent_kafka import KafkaException

    try:
        consumer.close()
    except KafkaException as exc:
        log.info("the replaced consumer closed with an error: %s", exc)


def _names(partitions) -> str:
    return ", ".join(f"{p.topic}[{p.partition}]" for p in partitions) or "nothing"
