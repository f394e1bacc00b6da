"""How every facestream process finds Kafka and makes its clients (topics: ``kafka_topics``; reading
without a group: ``kafka_reading``; ACL refusals: ``kafka_access``; group members: ``consumer_group``).

``KAFKA_BOOTSTRAP`` names an existing cluster; without it, processes talk to the local broker
that ``facestream kafka start`` runs on 127.0.0.1 (port ``FACESTREAM_KAFKA_PORT``, default 9092).
Every client made here also takes the process's Kafka settings (TLS, SASL, ...: ``kafka_settings``);
what a client sets for itself (e.g. the detector's manual commits) wins over them.
"""

import logging
import os
import time

from facestream import kafka_access, kafka_settings
from facestream.errors import BrokerError, ConfigError

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
    batch costs in Python. A leader cut off from the other brokers goes on answering fetches, with
    nothing new, and no error tells the member that another node leads now: only a metadata refresh
    does, every 5 minutes by librdkafka's default, every 5 s here."""
    return {
        "session.timeout.ms": int(session_timeout_s * 1000),
        "heartbeat.interval.ms": max(100, int(session_timeout_s * 1000 / 6)),
        "topic.metadata.refresh.interval.ms": 5_000,
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
                # How long a leader may hold a write for its copies. A leader cut off from the other
                # brokers holds it all that time before the producer tries the new one: with Kafka's
                # 30 s, frames waited up to 37 s (tests/deploy/test_network_faults.py); a healthy
                # write takes milliseconds.
                "request.timeout.ms": 10000,
                # Metadata asked of any node every 5 s (librdkafka's default: 5 minutes): a leader cut
                # off from the other brokers still says it leads, and a producer that asked only it went
                # on writing there until the network came back; the other nodes name the new leader.
                "topic.metadata.refresh.interval.ms": 5000,
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
            raise kafka_access.refusal_in(exc) or BrokerError(
                f"the Kafka client stopped on a fatal error ({exc.args[0].str()}); librdkafka's FATAL line above "
                "names it (a user that may write no topic gets no producer id: `facestream kafka acls`)"
            ) from None
        producer.purge()
        raise BrokerError("the Kafka client failed while waiting for its records to be acknowledged") from None


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


def dead_letter_headers(source, stage: str, error: Exception, group: str) -> list[tuple[str, bytes]]:
    """The headers a dead letter carries (schemas/README.md): what failed, at which stage, where the
    record was (``source``, a consumed message; None for what a service made of no record, such as an
    alert of a camera gone quiet) and which consumer group gave up on it."""
    headers = [
        ("facestream.error", f"{type(error).__name__}: {error}".encode()),
        ("facestream.stage", stage.encode()),
        ("facestream.group", group.encode()),
    ]
    if source is not None:
        headers.insert(2, ("facestream.source", f"{source.topic()}/{source.partition()}@{source.offset()}".encode()))
    return headers


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
