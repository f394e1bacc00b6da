"""The topics the services make and read: their partition counts, co-partitioning checked, and
making them (again, while a cluster comes up), and how far a group is behind on one."""

import logging
import os
import time

from facestream import kafka_clients
from facestream.errors import BrokerError, ConfigError

log = logging.getLogger(__name__)


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


def partition_count(topic: str, bootstrap: str | None = None, timeout_s: float = 30.0) -> int:
    """How many partitions ``topic`` has. A topic another process has just made can show none until
    its leaders are known: that is waited out, and a topic still without any is a BrokerError."""
    client = kafka_clients.admin(bootstrap)
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

    client = kafka_clients.admin(bootstrap) if client is None else client  # an AdminClient has a length: "or" is wrong
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

    client = kafka_clients.admin(bootstrap)
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


DAY_MS = 86_400_000


def retention_days(topics: list[str], bootstrap: str | None = None) -> dict[str, float | str]:
    """Each topic's ``retention.ms`` as the brokers apply it, in days (``inf``: kept forever); a
    sentence instead where it cannot be read (no such topic, or the ACLs do not allow it)."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import ConfigResource, ResourceType

    client = kafka_clients.admin(bootstrap)
    found: dict[str, float | str] = {}
    asked = {ConfigResource(ResourceType.TOPIC, topic): topic for topic in topics}
    for resource, future in client.describe_configs(list(asked), request_timeout=10).items():
        topic = asked.get(resource) or resource.name
        try:
            entry = future.result()["retention.ms"]
        except (KafkaException, KeyError) as exc:
            found[topic] = f"unknown: {exc}"
            continue
        ms = int(entry.value)
        found[topic] = float("inf") if ms < 0 else ms / DAY_MS
    return found


def set_retention_days(topics: dict[str, float], bootstrap: str | None = None) -> None:
    """Set each topic's ``retention.ms`` (days; ``inf`` keeps its records forever); BrokerError if refused."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

    client = kafka_clients.admin(bootstrap)
    resources = []
    for topic, days in topics.items():
        ms = "-1" if days == float("inf") else str(int(days * DAY_MS))
        change = ConfigEntry("retention.ms", ms, incremental_operation=AlterConfigOpType.SET)
        resources.append(ConfigResource(ResourceType.TOPIC, topic, incremental_configs=[change]))
    for resource, future in client.incremental_alter_configs(resources).items():
        try:
            future.result()
        except KafkaException as exc:
            raise BrokerError(f"cannot set the retention of topic {resource.name}: {exc.args[0]}") from None
        log.info("topic %s keeps its records %s days", resource.name, topics[resource.name])
