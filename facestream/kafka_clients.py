"""How every facestream process finds Kafka and makes sure its topics exist.

``KAFKA_BOOTSTRAP`` names an existing cluster; without it, processes talk to the local broker
that ``facestream kafka start`` runs on 127.0.0.1 (port ``FACESTREAM_KAFKA_PORT``, default 9092).
Every client made here also takes the process's Kafka settings (TLS, SASL, ...: ``kafka_settings``);
what a client sets for itself (e.g. the detector's manual commits) wins over them.
"""

import logging
import os
import time
from collections.abc import Callable, Iterator

from facestream import kafka_settings
from facestream.errors import BrokerError, ConfigError

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


def client_config(bootstrap: str | None = None, **config) -> dict:
    """librdkafka settings for one client: the address, the process's Kafka settings, then ``config``."""
    return {"bootstrap.servers": bootstrap or bootstrap_servers(), **kafka_settings.load(), **config}


SESSION_TIMEOUT_S = 6.0  # the least Kafka's brokers accept by default (librdkafka's own default is 45)


def membership(session_timeout_s: float) -> dict:
    """A consumer group member's liveness settings: it loses its partitions ``session_timeout_s`` after
    it stops answering (killed, hung, cut off). Heartbeats run on librdkafka's own thread, whatever a
    batch costs in Python."""
    return {
        "session.timeout.ms": int(session_timeout_s * 1000),
        "heartbeat.interval.ms": max(100, int(session_timeout_s * 1000 / 6)),
    }


def made(kind, config: dict):
    """``kind(config)`` (a confluent-kafka client class); a setting librdkafka refuses is a ConfigError."""
    from confluent_kafka import KafkaException

    try:
        return kind(config)
    except KafkaException as exc:
        raise ConfigError(f"Kafka refused a client setting: {exc.args[0].str()}") from None


def admin(bootstrap: str | None = None, quiet: bool = False, **config):
    """An admin client; ``quiet`` silences librdkafka's own connection-refused lines (for probes)."""
    from confluent_kafka.admin import AdminClient

    if quiet:
        config["log_level"] = 0
    return made(AdminClient, client_config(bootstrap, **config))


def producer(client_id: str, bootstrap: str | None = None, **config):
    """An idempotent producer (acks=all, no duplicates from its own retries) that takes frame-sized
    records and puts a key on the partition Java clients, Kafka Streams and faust put it on (murmur2;
    librdkafka's own default hashes differently), so the alerting service's tables can find a
    camera's partition from its id; ``config`` adds or overrides librdkafka settings."""
    from confluent_kafka import Producer

    return made(
        Producer,
        client_config(
            bootstrap,
            **{
                "client.id": client_id,
                "enable.idempotence": True,
                "linger.ms": 5,
                "message.max.bytes": MAX_MESSAGE_BYTES,
                "partitioner": "murmur2_random",
                **config,
            },
        ),
    )


def flush(producer, topic: str, timeout_s: float) -> int:
    """``producer.flush()``: how many records are still unacknowledged after ``timeout_s``. A fatal
    error that strikes while it waits (a user that may write no topic gets no producer id) can come out
    of confluent-kafka as a bare SystemError, a race in the client library; the next ``produce()`` to
    ``topic`` then raises it, named as an ACL refusal where the client still says which. A record that
    probe queued instead is purged."""
    from confluent_kafka import KafkaException

    try:
        return producer.flush(timeout_s)
    except SystemError:
        try:
            producer.produce(topic, b"")
        except KafkaException as exc:
            raise refusal_in(exc) or BrokerError(
                f"the Kafka client stopped on a fatal error ({exc.args[0].str()}); librdkafka's FATAL line above "
                "names it (a user that may write no topic gets no producer id: `facestream kafka acls`)"
            ) from None
        producer.purge()
        raise BrokerError("the Kafka client failed while waiting for its records to be acknowledged") from None


VIEWER_GROUP_PREFIX = "facestream-viewer-"  # every group that only watches: throwaway, never committed
EVIDENCE_GROUP = f"{VIEWER_GROUP_PREFIX}evidence"  # reading one frame back by its offset (evidence.py)


def viewer(topic: str | list[str], from_beginning: bool, bootstrap: str | None = None, on_assign=None, **config):
    """A consumer that only watches ``topic`` (or several): a throwaway group of its own and no commits,
    so it never takes partitions from the services' workers and leaves no trace. ``config`` adds
    librdkafka settings."""
    import uuid

    from confluent_kafka import Consumer

    consumer = made(
        Consumer,
        client_config(
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


def check_reachable(bootstrap: str | None = None, timeout_s: float = 10.0) -> int:
    """Return the number of brokers answering, or raise BrokerError with what to do about it: at once
    when the broker refuses the credentials, with librdkafka's own words when the connection fails
    (e.g. plaintext to a TLS listener)."""
    from confluent_kafka import KafkaError, KafkaException

    bootstrap = bootstrap or bootstrap_servers()
    said: list[KafkaError] = []
    failures = _Lines()  # librdkafka's connection failures, kept off stderr: the error below says them
    client = admin(bootstrap, error_cb=said.append, logger=failures.logger, log_level=6)
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return len(client.list_topics(timeout=min(1.0, timeout_s)).brokers)
        except KafkaException as exc:
            client.poll(0)  # callbacks and log lines are served here
            refused = next((e for e in said if e.code() == KafkaError._AUTHENTICATION), None)
            if refused is not None:
                raise BrokerError(f"Kafka at {bootstrap} refused the credentials: {refused.str()}") from None
            if time.monotonic() >= deadline:
                # The first connection failure says most (e.g. plaintext to a TLS listener); later ones summarise.
                fails = [line.split("]: ", 2)[-1] for line in failures.lines if line.startswith("FAIL")]
                why = fails[0] if fails else (said[0].str() if said else exc.args[0].str())
                if any("APIVERSION_QUERY" in line for line in fails):  # it took the connection, then dropped it
                    hint = (
                        " The listener closed the connection at the first request: it may want TLS or SASL "
                        "(security.protocol, in FACESTREAM_KAFKA_CONFIG or --kafka)."
                    )
                else:
                    hint = "" if external_bootstrap() else " Start the local one with `facestream kafka start`."
                raise BrokerError(f"no Kafka broker answers at {bootstrap} ({why}).{hint}") from None


class _Lines(logging.Handler):
    """A logger that keeps what it is given instead of printing it."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []
        self.logger = logging.getLogger(f"{__name__}.probe.{id(self)}")
        self.logger.propagate = False
        self.logger.addHandler(self)

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


COMPACTED = {"cleanup.policy": "compact"}  # a topic that keeps the last record per key (a tombstone removes it)
DEFAULT_PARTITIONS = 4


def pipeline_partitions() -> int:
    """Partitions of the pipeline topics (frames, detections, poses, alerts, camera-status) when a
    service makes them: ``FACESTREAM_PARTITIONS`` (the compose file's variable too), else 4. Replicas of
    one group never outnumber them; set it before the topics exist."""
    text = os.environ.get("FACESTREAM_PARTITIONS", "").strip()
    if not text:
        return DEFAULT_PARTITIONS
    if not text.isdigit() or int(text) < 1:
        raise ConfigError(f"FACESTREAM_PARTITIONS must be a whole number of partitions, 1 or more, got {text!r}")
    return int(text)


# Errors that retrying cannot cure: the cluster's ACLs do not let this client's user do it.
REFUSALS = (
    "TOPIC_AUTHORIZATION_FAILED",
    "GROUP_AUTHORIZATION_FAILED",
    "CLUSTER_AUTHORIZATION_FAILED",
    "TRANSACTIONAL_ID_AUTHORIZATION_FAILED",
)


def check_allowed(error, doing: str) -> None:
    """A BrokerError naming the user and what it may not do when ``error`` (a KafkaError, or None) is
    an authorization failure: a service that went on would only look idle, or drop what it sends."""
    from confluent_kafka import KafkaError

    if error is None or error.code() not in {getattr(KafkaError, name) for name in REFUSALS}:
        return
    user = kafka_settings.load().get("sasl.username", "(no sasl.username)")
    raise BrokerError(
        f"Kafka's ACLs do not let user {user} {doing}: {error.str()} "
        "(`facestream kafka acls` gives each role's user its own topics and groups)"
    )


def refusal_in(exc: BaseException) -> BrokerError | None:
    """The ACL refusal behind ``exc``: a KafkaException a client raised (a producer whose user may write
    no topic gets no producer id, a fatal error), or one an error it caused carries as its cause."""
    from confluent_kafka import KafkaException

    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, KafkaException) and seen.args and hasattr(seen.args[0], "code"):
            error = seen.args[0]
            no_id = "idempotence PID" in error.str()
            try:
                check_allowed(
                    error, "produce: it may write no topic, so it gets no producer id" if no_id else "do this"
                )
            except BrokerError as refused:
                return refused
        seen = seen.__cause__ or seen.__context__
    return None


def partition_count(topic: str, bootstrap: str | None = None, timeout_s: float = 30.0) -> int:
    """How many partitions ``topic`` has. A topic another process has just made can show none until
    its leaders are known: that is waited out, and a topic still without any is a BrokerError."""
    client = admin(bootstrap)
    deadline = time.monotonic() + timeout_s
    while True:
        found = client.list_topics(timeout=10).topics.get(topic)  # asked by name, a broker may make it
        if found is not None and found.error is None and found.partitions:
            return len(found.partitions)
        if time.monotonic() >= deadline:
            why = found.error if found is not None and found.error is not None else "no partitions"
            raise BrokerError(f"topic {topic} has no partitions to read after {timeout_s:g} s: {why}")
        time.sleep(0.2)


def group_lag(group: str, topic: str, bootstrap: str | None = None, client=None) -> int:
    """Records of ``topic`` that ``group`` has not committed yet, over all its partitions (a partition
    it never committed counts whole); ``client`` reuses an admin client for repeated asks."""
    from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
    from confluent_kafka.admin import OffsetSpec

    client = admin(bootstrap) if client is None else client  # an AdminClient has a length: "or" is wrong
    asked = [TopicPartition(topic, p) for p in client.list_topics(timeout=10).topics[topic].partitions]
    committed = client.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group, asked)])[group].result()
    ends = client.list_offsets({tp: OffsetSpec.latest() for tp in asked}, request_timeout=10)
    end = {tp.partition: future.result().offset for tp, future in ends.items()}
    return sum(end[tp.partition] - max(tp.offset, 0) for tp in committed.topic_partitions)


def check_co_partitioned(topics: list[str], bootstrap: str | None = None, why: str = "") -> int:
    """The one partition count ``topics`` share (keyed alike, their records of one key meet in one
    partition number); a ConfigError naming each count, and how to align them, when they differ."""
    counts = {topic: partition_count(topic, bootstrap) for topic in topics}
    if len(set(counts.values())) > 1:
        said = ", ".join(f"{topic} has {n}" for topic, n in counts.items())
        most = max(counts.values())
        raise ConfigError(
            f"topics not co-partitioned: {said} partitions{f' ({why})' if why else ''}; give them one count, "
            f"e.g. kafka-topics.sh --alter --partitions {most} --topic TOPIC for each smaller one"
        )
    return next(iter(counts.values()))


def ensure_topics(
    topics: dict[str, int],
    bootstrap: str | None = None,
    timeout_s: float = 30.0,
    configs: dict[str, dict[str, str]] | None = None,
) -> None:
    """Create the topics that do not exist yet, with the given partition counts (and topic configs,
    e.g. ``COMPACTED``, by name); keep the rest. A refusal that passes with the cluster's state (fewer
    nodes registered than the replication factor while a cluster comes up, a controller moving, a
    timeout) is asked again every second for up to ``timeout_s``, with a warning; any other is a
    BrokerError at once."""
    from confluent_kafka.admin import NewTopic

    client = admin(bootstrap)
    deadline = time.monotonic() + timeout_s
    existing = client.list_topics(timeout=timeout_s).topics
    pending = [
        NewTopic(name, num_partitions=n, config=(configs or {}).get(name, {}))
        for name, n in topics.items()
        if name not in existing
    ]
    warned: set[str] = set()
    while pending:
        wait_s = max(1.0, deadline - time.monotonic())
        asked = {topic.topic: topic for topic in pending}
        pending = []
        for name, future in client.create_topics(list(asked.values()), operation_timeout=wait_s).items():
            error = _creation_error(future)
            if error is None:
                log.info("created topic %s", name)
            elif _passes(error) and time.monotonic() < deadline:
                if name not in warned:
                    warned.add(name)
                    log.warning("cannot create topic %s yet (%s); asking again for up to %.0f s", name, error, wait_s)
                pending.append(asked[name])
            else:
                raise BrokerError(f"cannot create topic {name}: {error}")
        if pending:
            time.sleep(1.0)


def _creation_error(future):
    """The KafkaError a topic's creation ended with; None once the topic exists (made by this call or
    by a concurrent creator, which wins the race: that is fine)."""
    from confluent_kafka import KafkaError, KafkaException

    try:
        future.result()
    except KafkaException as exc:
        error = exc.args[0]
        return None if error.code() == KafkaError.TOPIC_ALREADY_EXISTS else error
    return None


def _passes(error) -> bool:
    """Whether a refusal to create a topic can pass as the cluster's state changes."""
    from confluent_kafka import KafkaError

    transient = (KafkaError.INVALID_REPLICATION_FACTOR, KafkaError.NOT_CONTROLLER, KafkaError._TIMED_OUT)
    return error.retriable() or error.code() in transient


def dead_letter_headers(source, stage: str, error: Exception, group: str) -> list[tuple[str, bytes]]:
    """The headers a dead letter carries (schemas/README.md): what failed, at which stage, where the
    record was (``source``, a consumed message) and which consumer group gave up on it."""
    return [
        ("facestream.error", f"{type(error).__name__}: {error}".encode()),
        ("facestream.stage", stage.encode()),
        ("facestream.source", f"{source.topic()}/{source.partition()}@{source.offset()}".encode()),
        ("facestream.group", group.encode()),
    ]


def send(
    producer,
    topic: str,
    value: bytes | None,
    key: bytes | None = None,
    headers=None,
    on_delivery=None,
    partition: int = -1,
) -> None:
    """Produce one record (to ``partition``, or where its key places it), waiting while librdkafka's
    local queue is full (back-pressure): serving delivery reports frees room, so a fast sender slows
    to the broker's pace instead of failing."""
    while True:
        try:
            producer.produce(topic, value=value, key=key, headers=headers, on_delivery=on_delivery, partition=partition)
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
                check_allowed(msg.error(), f"read {msg.topic() or topic}")
                if not msg.error():
                    yield msg
    finally:
        consumer.close()


def read_to_end(
    topic: str, bootstrap: str | None = None, timeout_s: float = 30.0, only: list[int] | None = None
) -> list:
    """Every record of ``topic`` (of its partitions ``only``, if given) up to its end as of the call,
    tombstones included (a compacted topic's current state); BrokerError if that cannot be read within
    ``timeout_s``."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaException, TopicPartition

    # Never subscribes or commits: partitions are assigned by hand.
    consumer = made(
        Consumer, client_config(bootstrap, **{"group.id": "facestream-reader", "enable.auto.commit": False})
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
