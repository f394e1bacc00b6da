"""Reading topics without taking part in the services' groups: viewers in throwaway groups, records as
they come, a topic read to its end, and where a new group starts a duration back."""

import logging
import time
from collections.abc import Callable, Iterator

from facestream import kafka_access, kafka_clients
from facestream.errors import BrokerError

log = logging.getLogger(__name__)


VIEWER_GROUP_PREFIX = "facestream-viewer-"  # every group that only watches: throwaway, never committed


EVIDENCE_GROUP = f"{VIEWER_GROUP_PREFIX}evidence"  # reading one frame back by its offset (evidence.py)


def viewer(topic: str | list[str], from_beginning: bool, bootstrap: str | None = None, on_assign=None, **config):
    """A consumer that only watches ``topic`` (or several): a throwaway group of its own and no commits,
    so it never takes partitions from the services' workers and leaves no trace. ``config`` adds
    librdkafka settings."""
    import uuid

    from confluent_kafka import Consumer

    consumer = kafka_clients.made(
        Consumer,
        kafka_clients.client_config(
            bootstrap,
            **{
                "group.id": f"{VIEWER_GROUP_PREFIX}{uuid.uuid4().hex[:12]}",
                "auto.offset.reset": "earliest" if from_beginning else "latest",
                "enable.auto.commit": False,
                **config,
            },
        ),
    )
    topics = [topic] if isinstance(topic, str) else topic
    if on_assign is None:
        consumer.subscribe(topics)
    else:
        consumer.subscribe(topics, on_assign=on_assign)
    return consumer


def placed_back(consumer, partitions: list, start_back_s: float) -> list:
    """``partitions`` just assigned, with the ones the group never committed set to the first record of
    the last ``start_back_s`` seconds (or, with none that recent, the end as of now: a record arriving
    in between is still taken); committed ones resume as usual. For ``--start-at DURATION``."""
    from confluent_kafka import TopicPartition

    since_ms = int((time.time() - start_back_s) * 1000)
    committed = consumer.committed(partitions, timeout=10)
    fresh = [TopicPartition(p.topic, p.partition, since_ms) for p in committed if p.offset < 0]
    found = {(p.topic, p.partition): p.offset for p in consumer.offsets_for_times(fresh, timeout=10)} if fresh else {}
    placed = []
    for p in committed:
        offset = found.get((p.topic, p.partition), p.offset)
        if (p.topic, p.partition) in found:
            if offset < 0:
                offset = consumer.get_watermark_offsets(TopicPartition(p.topic, p.partition), timeout=10)[1]
            log.info("%s[%d]: no commit of this group yet, starting at offset %d", p.topic, p.partition, offset)
        placed.append(TopicPartition(p.topic, p.partition, offset))
    return placed


def records(
    topic: str | list[str],
    until: Callable[[], bool],
    from_beginning: bool = True,
    bootstrap: str | None = None,
    poll_s: float = 0.5,
    on_assign=None,
    **config,
) -> Iterator:
    """The records of ``topic`` as they arrive, through a ``viewer``, until ``until()`` is true (asked
    before every record and every poll, so at most ``poll_s`` late); the consumer is closed however
    the loop ends. Records that carry an error instead of a value are skipped, unless the error is a
    refusal by the cluster's ACLs (a BrokerError)."""
    consumer = viewer(topic, from_beginning, bootstrap, on_assign=on_assign, **config)
    try:
        while not until():
            first = consumer.poll(poll_s)  # returns at the first record; consume(n, t) would wait for n
            if first is None:
                continue
            for msg in [first, *consumer.consume(500, 0)]:
                if until():
                    return
                kafka_access.check_allowed(msg.error(), f"read {msg.topic() or topic}")
                if not msg.error():
                    yield msg
    finally:
        consumer.close()


def read_to_end(
    topic: str,
    bootstrap: str | None = None,
    timeout_s: float = 30.0,
    only: list[int] | None = None,
    since_ms: int | None = None,
) -> list:
    """Every record of ``topic`` (of its partitions ``only``, if given) up to its end as of the call,
    tombstones included (a compacted topic's current state), or, with ``since_ms``, those from the first
    one timestamped at or after it (a long topic's recent part, without reading it all); BrokerError if
    that cannot be read within ``timeout_s``."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaException, TopicPartition

    # Never subscribes or commits: partitions are assigned by hand.
    consumer = kafka_clients.made(
        Consumer,
        kafka_clients.client_config(bootstrap, **{"group.id": "facestream-reader", "enable.auto.commit": False}),
    )
    deadline = time.monotonic() + timeout_s

    def end_of(partition: int) -> int:
        """The partition's high watermark, waiting out a leader election (a topic made moments ago)."""
        while True:
            try:
                return consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=timeout_s)[1]
            except KafkaException as exc:  # e.g. NOT_LEADER_FOR_PARTITION, which librdkafka does not call retriable
                if time.monotonic() > deadline:
                    raise BrokerError(f"cannot read where {topic}[{partition}] ends: {exc.args[0].str()}") from None
                time.sleep(0.2)

    try:
        partitions = (
            only if only is not None else consumer.list_topics(topic, timeout=timeout_s).topics[topic].partitions
        )
        ends = {(topic, p): end_of(p) for p in partitions}
        starts = [TopicPartition(topic, p, OFFSET_BEGINNING if since_ms is None else since_ms) for p in partitions]
        if since_ms is not None:  # -1 where no record is that recent: nothing to read there
            starts = consumer.offsets_for_times(starts, timeout=timeout_s)
            ends = {(s.topic, s.partition): ends[(s.topic, s.partition)] if s.offset >= 0 else 0 for s in starts}
        consumer.assign(starts)
        return list(to_the_end(consumer, ends, deadline, f"could not read {topic} to its end within {timeout_s:.0f} s"))
    finally:
        consumer.close()


def to_the_end(
    consumer, ends: dict[tuple[str, int], int], deadline: float, late: str | None = None, past=None
) -> Iterator:
    """The records of the partitions ``consumer`` was assigned, in each partition's order, each up to
    its end in ``ends`` (its high watermark as of the call) or up to its first record that ``past``
    accepts (that one included); until ``deadline`` (``time.monotonic()``), then BrokerError(``late``),
    or, without ``late``, no more. Records that carry an error are skipped."""
    left = {where for where, end in ends.items() if end > 0}
    while left:
        if time.monotonic() > deadline:
            if late is not None:
                raise BrokerError(late)
            return
        msg = consumer.poll(0.5)
        if msg is None or msg.error():
            continue
        where = (msg.topic(), msg.partition())
        if msg.offset() >= ends[where] - 1 or (past is not None and past(msg)):
            left.discard(where)
        yield msg
