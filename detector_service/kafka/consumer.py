"""The detector's group member: the base member (``facestream.consumer_group``, where the group's
fault policy lives) with commits that only cover frames whose events landed.

Auto-commit and the automatic offset store are off; offsets are committed from the ``OffsetTracker``,
which knows which frames are done (their events acknowledged). On a revocation the member first lets
its in-flight records land, then commits what it owned; with exactly-once, offsets commit inside the
producer's transactions instead.
"""

from collections.abc import Callable

from facestream import kafka_clients
from facestream.consumer_group import GroupMember, Partitions
from facestream.detector_service.kafka.offsets import OffsetTracker
from facestream.detector_service.kafka.transactions import Transactions
from facestream.errors import BrokerError


class FramesMember(GroupMember):
    """A member of the detector's group on the frames topic that commits only what the tracker says
    is safe."""

    def __init__(
        self,
        bootstrap: str,
        group: str,
        topic: str,
        client_id: str,
        publisher_flush: Callable[[], int],
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
        self._flush = publisher_flush
        self._transactions = transactions  # exactly-once: offsets commit inside the producer's transactions
        super().__init__(
            bootstrap,
            group,
            topic,
            client_id,
            start_at=start_at,
            start_back_s=start_back_s,
            session_timeout_s=session_timeout_s,
            config={
                "enable.auto.offset.store": False,
                # Frames are large (tens of KB to MBs): fetch big chunks per partition and keep a deep
                # local queue, or the consumer waits on round trips of ~1 MB (librdkafka's default).
                "fetch.max.bytes": 4 * kafka_clients.MAX_MESSAGE_BYTES,
                "max.partition.fetch.bytes": kafka_clients.MAX_MESSAGE_BYTES,
                "queued.max.messages.kbytes": fetch_queue_mb * 1024,
            },
            on_revoke=self._revoking,
            on_lost=self._losing,
            on_committed=self.tracker.answered,
            on_ownership=on_ownership,
            on_new_consumer=on_new_consumer,
        )

    def commit(self, offsets=None, asynchronous: bool = True) -> None:  # type: ignore[override]  # offsets: the tracker's
        """Commit what the tracker says is done (with exactly-once, in a transaction)."""
        if self._transactions is not None:
            self._commit_transaction()
            return
        ready = {tp: off for tp, off in self.tracker.committable(again=not asynchronous).items() if tp in self.assigned}
        if ready and super().commit(ready, asynchronous) and asynchronous:
            self.tracker.mark_sent(ready)  # answered in _committed, from a later poll

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

    def _revoking(self, partitions: Partitions) -> None:
        """Let the in-flight events land, commit what is done, forget the rest."""
        self._flush()
        self.commit(asynchronous=False)
        self.tracker.forget([(p.topic, p.partition) for p in partitions])

    def _losing(self, partitions: Partitions) -> None:
        self.tracker.forget([(p.topic, p.partition) for p in partitions])
        if self._transactions is not None:  # the open transaction may hold their records: it cannot commit
            names = ", ".join(f"{p.topic}[{p.partition}]" for p in partitions)
            raise BrokerError(f"exactly-once: lost {names} without a hand-over; stopping so the group reassigns them")
