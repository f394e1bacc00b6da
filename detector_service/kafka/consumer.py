"""The Kafka side of the detector: the group member and its commits after acks.

Auto-commit is off and offsets are committed explicitly from the ``OffsetTracker``; on a
rebalance the member first lets its in-flight records land, then commits what it owned.

A member that does not poll for ``max.poll.interval.ms`` is taken for hung and leaves the group, so
while a slow batch runs the caller calls ``keep_alive``: its partitions are paused and polled, which
serves rebalances and proves the member alive without fetching frames it could not start yet.

A member that lost its partitions with the broker and still has none well after the broker answers
again makes a new consumer (``_rejoin_if_stuck``): librdkafka 2.16 has been seen to keep such a
member's request to the group coordinator queued and never sent, so that it idled for good.
"""

import logging
import threading
import time
from collections.abc import Callable

from confluent_kafka import Consumer, KafkaException, Message, TopicPartition

from facestream import kafka_clients
from facestream.detector_service.kafka.offsets import OffsetTracker
from facestream.detector_service.kafka.transactions import Transactions
from facestream.errors import BrokerError

log = logging.getLogger(__name__)
IDLE_WARN_S = 10.0  # a member without partitions this long after a rebalance is told it idles
# A member that lost its partitions waits this many session timeouts (at least REJOIN_MIN_S) for them
# or others, while the broker answers, before it makes a new consumer.
REJOIN_SESSIONS = 5
REJOIN_MIN_S = 30.0
REACHABLE_EVERY_S = 5.0  # while waiting to rejoin past the limit: how often the broker is asked whether it is back


class GroupMember:
    """A consumer-group member that commits only what the ``OffsetTracker`` says is safe."""

    def __init__(
        self,
        bootstrap: str,
        group: str,
        topic: str,
        client_id: str,
        publisher_flush,
        start_at: str = "earliest",
        start_back_s: float | None = None,
        session_timeout_s: float = kafka_clients.SESSION_TIMEOUT_S,
        transactions: Transactions | None = None,
        fetch_queue_mb: int = 256,
        on_ownership: Callable[[bool], None] = lambda owns: None,
        on_new_consumer: Callable[[], None] = lambda: None,
    ) -> None:
        """``start_at`` (earliest, latest) or ``start_back_s`` (seconds back from now) is where a
        partition this group never committed starts; a committed one resumes after its commit."""
        self.tracker = OffsetTracker()
        self._start_back_s = start_back_s
        self._transactions = transactions  # exactly-once: offsets commit inside the producer's transactions
        self.assigned: set[tuple[str, int]] = set()
        # Monotonic clock of the latest assignment (None: never assigned): partitions handed over
        # bring a backlog, so idleness counts from there.
        self.assigned_at: float | None = None
        self.lost_at: float | None = None  # monotonic clock of the latest loss without a hand-over
        self._flush = publisher_flush
        self._on_ownership = on_ownership  # told whether this member owns partitions, after each change
        self._on_new_consumer = on_new_consumer  # told each time a stuck consumer is replaced
        self._bootstrap = bootstrap
        self.rejoin_limit_s = max(REJOIN_MIN_S, REJOIN_SESSIONS * session_timeout_s)
        self._next_reachable_check = 0.0
        self._paused: list[TopicPartition] = []
        self._held: list = []  # records a keep-alive poll returned (a partition assigned meanwhile)
        config = kafka_clients.client_config(
            bootstrap,
            **{
                "group.id": group,
                "client.id": client_id,
                "enable.auto.commit": False,
                "enable.auto.offset.store": False,
                # A partition without a commit: start_back_s places it in _on_assign instead.
                "auto.offset.reset": "latest" if start_back_s is not None else start_at,
                "partition.assignment.strategy": "cooperative-sticky",
                **kafka_clients.membership(session_timeout_s),
                # Frames are large (tens of KB to MBs): fetch big chunks per partition and keep a deep
                # local queue, or the consumer waits on round trips of ~1 MB (librdkafka's default).
                "fetch.max.bytes": 4 * kafka_clients.MAX_MESSAGE_BYTES,
                "max.partition.fetch.bytes": kafka_clients.MAX_MESSAGE_BYTES,
                "queued.max.messages.kbytes": fetch_queue_mb * 1024,
                "on_commit": self._on_commit,
            },
        )
        # A batch that has run a quarter of the poll interval gets keep-alive polls from then on.
        self.keep_alive_s = max(0.5, int(config.get("max.poll.interval.ms", 300_000)) / 4000)
        self._config, self._topic = config, topic
        self._idle_since: float | None = None  # when the latest rebalance left this member without partitions
        self.consumer = self._subscribed()

    def _subscribed(self) -> Consumer:
        """A new consumer of the topic in the group, this member's callbacks registered."""
        consumer = kafka_clients.made(Consumer, self._config)
        consumer.subscribe([self._topic], on_assign=self._on_assign, on_revoke=self._on_revoke, on_lost=self._on_lost)
        self._made_at = time.monotonic()
        return consumer

    def consume(self, max_messages: int, timeout_s: float) -> list[Message]:
        self._say_if_idle()
        self._rejoin_if_stuck()
        if self._held:
            taken, self._held = self._held[:max_messages], self._held[max_messages:]
            return taken
        return self.consumer.consume(num_messages=max_messages, timeout=timeout_s)

    def keep_alive(self) -> None:
        """Poll without taking new frames: pause what is assigned (once), then poll. A partition
        assigned during the poll is not paused yet, so whatever it brings is held for ``consume``."""
        if not self._paused and self.assigned:
            self._paused = [TopicPartition(t, p) for t, p in sorted(self.assigned)]
            self.consumer.pause(self._paused)
        self._held.extend(self.consumer.consume(num_messages=1000, timeout=0))

    def resume(self) -> None:
        """Fetch again for the partitions ``keep_alive`` paused (from the first frame not yet taken)."""
        still = [tp for tp in self._paused if (tp.topic, tp.partition) in self.assigned]
        self._paused = []
        if still:
            self.consumer.resume(still)

    def owns(self, msg) -> bool:
        return (msg.topic(), msg.partition()) in self.assigned

    def commit(self, asynchronous: bool) -> None:
        if self._transactions is not None:
            self._commit_transaction()
            return
        ready = self.tracker.committable(again=not asynchronous)
        ready = {tp: off for tp, off in ready.items() if tp in self.assigned}
        if not ready:
            return
        offsets = [TopicPartition(t, p, o) for (t, p), o in ready.items()]
        try:
            if asynchronous:  # answered in _on_commit, from a later poll
                self.consumer.commit(offsets=offsets, asynchronous=True)
                self.tracker.mark_sent(ready)
            else:
                self._on_commit(None, self.consumer.commit(offsets=offsets, asynchronous=False))
        except KafkaException as exc:  # e.g. a rebalance in progress: the next commit retries
            log.warning("offset commit failed, will retry: %s", exc)

    def _on_commit(self, error, partitions: list[TopicPartition]) -> None:
        """The broker's answer to a commit: what it took is committed; what failed is offered again."""
        failed = []
        for tp in partitions:
            ok = error is None and tp.error is None
            self.tracker.answered((tp.topic, tp.partition), tp.offset, ok)
            if not ok:
                failed.append(f"{tp.topic}/{tp.partition}@{tp.offset}")
        if failed:
            log.warning("offset commit of %s failed (%s), will retry", ", ".join(failed), error or "per partition")

    def _commit_transaction(self) -> None:
        """Exactly-once: wait until every record produced so far is acknowledged (their frames are then
        done), and commit those records and the offsets past their frames in one transaction."""
        if self._flush():
            return  # records still unacknowledged: they and their offsets wait for the next commit
        ready = {tp: off for tp, off in self.tracker.committable().items() if tp in self.assigned}
        assert self._transactions is not None  # the exactly-once mode is what calls this
        if ready:
            self._transactions.commit(ready, self.consumer.consumer_group_metadata())
            self.tracker.mark_committed(ready)

    def close(self) -> None:
        self.consumer.close()

    def _on_assign(self, consumer, partitions) -> None:
        if consumer is not self.consumer:  # a replaced consumer, closing
            return
        self.assigned |= {(p.topic, p.partition) for p in partitions}
        if partitions:
            self.assigned_at = time.monotonic()
        self._on_ownership(bool(self.assigned))
        log.info("assigned %s", _names(partitions))
        # Cooperative rebalancing may hand a joining member nothing in its first round: only a member
        # still without partitions IDLE_WARN_S later is told that it idles.
        self._idle_since = None if self.assigned else (self._idle_since or time.monotonic())
        if self._start_back_s is not None and partitions:
            consumer.incremental_assign(kafka_clients.placed_back(consumer, partitions, self._start_back_s))

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
            "to rejoin group (the old one's requests to the group coordinator went unanswered)",
            waited,
        )
        stuck, self.consumer = self.consumer, self._subscribed()
        self._paused, self._held = [], []
        threading.Thread(target=_close_quietly, args=(stuck,), name="close-stuck-consumer", daemon=True).start()
        self._on_new_consumer()

    def _say_if_idle(self) -> None:
        """A member left without partitions idles: a topic's partitions bound how many members share it.
        Said once per spell without partitions."""
        if self._idle_since is None or time.monotonic() - self._idle_since < IDLE_WARN_S:
            return
        self._idle_since = float("inf")  # warned once; a later assignment resets it
        try:
            count = str(len(self.consumer.list_topics(self._topic, timeout=5).topics[self._topic].partitions))
        except KafkaException:
            count = "?"
        log.warning(
            "this replica owns no partition of %s: the group has more members than the topic has partitions (%s), "
            "so it idles, not ready, until one is free (more replicas need more partitions)",
            self._topic,
            count,
        )

    def _on_revoke(self, consumer, partitions) -> None:
        if consumer is not self.consumer:
            return
        log.info("revoked %s: committing what has landed", _names(partitions))
        self._flush()
        self.commit(asynchronous=False)
        self._drop(partitions)

    def _on_lost(self, consumer, partitions) -> None:
        if consumer is not self.consumer:
            return
        log.warning("lost %s without a clean hand-over: their frames will be processed again", _names(partitions))
        self.lost_at = time.monotonic()
        self._drop(partitions)
        if self._transactions is not None:  # the open transaction may hold their records: it cannot commit
            raise BrokerError(
                f"exactly-once: lost {_names(partitions)} without a hand-over; stopping so the group reassigns them"
            )

    @property
    def waiting_to_rejoin(self) -> bool:
        """Whether this member lost its partitions (e.g. the broker went away) and has had none since."""
        return not self.assigned and self.lost_at is not None and self.lost_at > (self.assigned_at or 0.0)

    def _drop(self, partitions) -> None:
        tps = [(p.topic, p.partition) for p in partitions]
        self.assigned -= set(tps)
        self.tracker.forget(tps)
        self._on_ownership(bool(self.assigned))


def _close_quietly(consumer: Consumer) -> None:
    try:
        consumer.close()
    except KafkaException as exc:
        log.info("the replaced consumer closed with an error: %s", exc)


def _names(partitions) -> str:
    return ", ".join(f"{p.topic}[{p.partition}]" for p in partitions) or "nothing"
