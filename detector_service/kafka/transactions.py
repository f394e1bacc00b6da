"""Exactly-once delivery (``--exactly-once``): a batch's events and dead letters, and the offsets of
the frames they answer, commit in one Kafka transaction. A reader with ``isolation.level=
read_committed`` then sees each frame's event once, even when a replica dies between producing and
committing: its open transaction is aborted (at the latest after ``TIMEOUT_S``) and the frames are
answered again by the next owner, in a transaction of its own.

Every transaction is committed right after a batch's records are acknowledged, so the transaction
stays short and the records of frames not yet answered are never in it.
"""

import logging
import uuid

from confluent_kafka import KafkaException, TopicPartition

from facestream.errors import BrokerError

log = logging.getLogger(__name__)

# How long the broker keeps a dead replica's transaction open before aborting it: read_committed
# readers of its partitions wait that long at most. A transaction spans one batch's produce.
TIMEOUT_S = 10.0


def producer_settings(client_id: str, group: str) -> dict:
    """The transactional producer's settings: an id of its own per process (a restarted replica is
    a new producer; the group's commits, checked by the broker, keep zombies out: KIP-447)."""
    return {
        "transactional.id": f"{group}.{client_id}.{uuid.uuid4().hex[:12]}",
        "transaction.timeout.ms": int(TIMEOUT_S * 1000),
    }


HEADER = "facestream.transaction"  # on every record: which transaction wrote it (an auditor's check)


class Transactions:
    """The producer's open transaction: committed with the consumer's offsets, then the next begun."""

    def __init__(self, producer, transactional_id: str, timeout_s: float = 30.0) -> None:
        self._producer = producer
        self._timeout_s = timeout_s
        self.transactional_id = transactional_id
        self.number = 0  # of the open transaction, counted from 0 by this producer
        self._call(producer.init_transactions, timeout_s)
        self._call(producer.begin_transaction)

    def header(self) -> tuple[str, bytes]:
        """``HEADER`` for a record of the open transaction: ``<transactional.id>#<number>``. A reader
        that sees some records of one transaction as committed must see all of them (no torn or
        aborted reads): ``tests/e2e/test_cluster.py`` checks that with this."""
        return HEADER, f"{self.transactional_id}#{self.number}".encode()

    def commit(self, offsets: dict[tuple[str, int], int], group_metadata) -> None:
        """Commit every record produced since the last commit together with ``offsets``; begin anew."""
        if offsets:
            positions = [TopicPartition(t, p, o) for (t, p), o in offsets.items()]
            self._call(self._producer.send_offsets_to_transaction, positions, group_metadata, self._timeout_s)
        self._call(self._producer.commit_transaction, self._timeout_s)
        self.number += 1
        self._call(self._producer.begin_transaction)

    def _call(self, fn, *args) -> None:
        """Any transaction error stops the replica: its frames go to the next owner, committed once."""
        try:
            fn(*args)
        except KafkaException as exc:
            raise BrokerError(f"Kafka transaction failed ({fn.__name__}): {exc.args[0].str()}") from None
