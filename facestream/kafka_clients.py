"""How every facestream process finds Kafka and makes sure its topics exist.

``KAFKA_BOOTSTRAP`` names an existing cluster; without it, processes talk to the local broker
that ``facestream kafka start`` runs on 127.0.0.1 (port ``FACESTREAM_KAFKA_PORT``, default 9092).
"""

import logging
import os
from collections.abc import Callable, Iterator

from facestream.errors import BrokerError

log = logging.getLogger(__name__)

DEFAULT_LOCAL_PORT = 9092
# Frames of large cameras exceed Kafka's 1 MB default; the local broker and our clients agree on this.
MAX_MESSAGE_BYTES = 16 * 1024 * 1024
# Bytes a record needs beyond its key, value and header texts (record and batch framing, header
# lengths): a value must leave this much of MAX_MESSAGE_BYTES free.
RECORD_ROOM = 4096


def local_port() -> int:
    return int(os.environ.get("FACESTREAM_KAFKA_PORT", DEFAULT_LOCAL_PORT))


def external_bootstrap() -> str | None:
    """The cluster named by ``KAFKA_BOOTSTRAP``, if any: then no local broker is started."""
    return os.environ.get("KAFKA_BOOTSTRAP") or None


def bootstrap_servers() -> str:
    return external_bootstrap() or f"127.0.0.1:{local_port()}"


def admin(bootstrap: str | None = None, quiet: bool = False):
    """An admin client; ``quiet`` silences librdkafka's own connection-refused lines (for probes)."""
    from confluent_kafka.admin import AdminClient

    config = {"bootstrap.servers": bootstrap or bootstrap_servers()}
    if quiet:
        config["log_level"] = 0
    return AdminClient(config)


def producer(client_id: str, bootstrap: str | None = None, **config):
    """An idempotent producer (acks=all, no duplicates from its own retries) that takes frame-sized
    records and puts a key on the partition Java clients, Kafka Streams and faust put it on (murmur2;
    librdkafka's own default hashes differently), so the alerting service's tables can find a
    camera's partition from its id; ``config`` adds or overrides librdkafka settings."""
    from confluent_kafka import Producer

    return Producer(
        {
            "bootstrap.servers": bootstrap or bootstrap_servers(),
            "client.id": client_id,
            "enable.idempotence": True,
            "linger.ms": 5,
            "message.max.bytes": MAX_MESSAGE_BYTES,
            "partitioner": "murmur2_random",
            **config,
        }
    )


def viewer(topic: str | list[str], from_beginning: bool, bootstrap: str | None = None, on_assign=None, **config):
    """A consumer that only watches ``topic`` (or several): a throwaway group of its own and no commits,
    so it never takes partitions from the services' workers and leaves no trace. ``config`` adds
    librdkafka settings."""
    import uuid

    from confluent_kafka import Consumer

    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap or bootstrap_servers(),
            "group.id": f"facestream-viewer-{uuid.uuid4().hex[:12]}",
            "auto.offset.reset": "earliest" if from_beginning else "latest",
            "enable.auto.commit": False,
            **config,
        }
    )
    topics = [topic] if isinstance(topic, str) else topic
    if on_assign is None:
        consumer.subscribe(topics)
    else:
        consumer.subscribe(topics, on_assign=on_assign)
    return consumer


def check_reachable(bootstrap: str | None = None, timeout_s: float = 10.0) -> int:
    """Return the number of brokers answering, or raise BrokerError with what to do about it."""
    from confluent_kafka import KafkaException

    bootstrap = bootstrap or bootstrap_servers()
    try:
        meta = admin(bootstrap, quiet=True).list_topics(timeout=timeout_s)
    except KafkaException as exc:
        hint = "" if external_bootstrap() else " Start the local one with `facestream kafka start`."
        raise BrokerError(f"no Kafka broker answers at {bootstrap} ({exc.args[0].str()}).{hint}") from None
    return len(meta.brokers)


COMPACTED = {"cleanup.policy": "compact"}  # a topic that keeps the last record per key (a tombstone removes it)


def ensure_topics(
    topics: dict[str, int],
    bootstrap: str | None = None,
    timeout_s: float = 30.0,
    configs: dict[str, dict[str, str]] | None = None,
) -> None:
    """Create the topics that do not exist yet, with the given partition counts (and topic configs,
    e.g. ``COMPACTED``, by name); keep the rest."""
    from confluent_kafka import KafkaError
    from confluent_kafka.admin import NewTopic

    client = admin(bootstrap)
    existing = client.list_topics(timeout=timeout_s).topics
    missing = [
        NewTopic(name, num_partitions=n, config=(configs or {}).get(name, {}))
        for name, n in topics.items()
        if name not in existing
    ]
    for name, future in client.create_topics(missing, operation_timeout=timeout_s).items() if missing else []:
        try:
            future.result()
            log.info("created topic %s", name)
        except Exception as exc:  # a concurrent creator wins the race: that is fine
            err = exc.args[0] if exc.args else None
            if getattr(err, "code", lambda: None)() != KafkaError.TOPIC_ALREADY_EXISTS:
                raise BrokerError(f"cannot create topic {name}: {exc}") from None


def send(producer, topic: str, value: bytes, key: bytes | None = None, headers=None, on_delivery=None) -> None:
    """Produce one record, waiting while librdkafka's local queue is full (back-pressure): serving
    delivery reports frees room, so a fast sender slows to the broker's pace instead of failing."""
    while True:
        try:
            producer.produce(topic, value=value, key=key, headers=headers, on_delivery=on_delivery)
            return
        except BufferError:
            producer.poll(0.1)


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
    the loop ends. Records that carry an error instead of a value are skipped."""
    consumer = viewer(topic, from_beginning, bootstrap, on_assign=on_assign, **config)
    try:
        while not until():
            first = consumer.poll(poll_s)  # returns at the first record; consume(n, t) would wait for n
            if first is None:
                continue
            for msg in [first, *consumer.consume(500, 0)]:
                if until():
                    return
                if not msg.error():
                    yield msg
    finally:
        consumer.close()


def read_to_end(topic: str, bootstrap: str | None = None, timeout_s: float = 30.0) -> list:
    """Every record of ``topic`` up to its end as of the call, tombstones included (a compacted
    topic's current state); BrokerError if that cannot be read within ``timeout_s``."""
    import time

    from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaException, TopicPartition

    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap or bootstrap_servers(),
            "group.id": "facestream-reader",  # never subscribes or commits: partitions are assigned by hand
            "enable.auto.commit": False,
        }
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
        partitions = consumer.list_topics(topic, timeout=timeout_s).topics[topic].partitions
        ends = {p: end_of(p) for p in partitions}
        left = {p for p, end in ends.items() if end > 0}
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions])
        records = []
        while left:
            if time.monotonic() > deadline:
                raise BrokerError(f"could not read {topic} to its end within {timeout_s:.0f} s")
            msg = consumer.poll(0.5)
            if msg is None or msg.error():
                continue
            records.append(msg)
            if msg.offset() >= ends[msg.partition()] - 1:
                left.discard(msg.partition())
        return records
    finally:
        consumer.close()
