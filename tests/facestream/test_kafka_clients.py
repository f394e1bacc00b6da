"""The pipeline's partition count, from one place, and read back from the broker."""

import uuid

import pytest

from facestream import kafka_topics
from facestream.errors import BrokerError, ConfigError


def test_the_pipeline_partition_count_comes_from_one_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FACESTREAM_PARTITIONS", raising=False)
    assert kafka_topics.pipeline_partitions() == 4
    monkeypatch.setenv("FACESTREAM_PARTITIONS", "12")
    assert kafka_topics.pipeline_partitions() == 12
    for wrong in ("0", "six", "-2"):
        monkeypatch.setenv("FACESTREAM_PARTITIONS", wrong)
        with pytest.raises(ConfigError, match="FACESTREAM_PARTITIONS"):
            kafka_topics.pipeline_partitions()


def test_a_partition_count_is_never_zero(bootstrap: str) -> None:
    # A topic that has no partitions yet (not made, or its leaders not known) once counted 0, and an
    # alerting worker then asked Kafka for a changelog of 0 partitions: now it is waited for, then an error.
    made, never = (f"t-{uuid.uuid4().hex[:10]}.{name}" for name in ("made", "never"))
    kafka_topics.ensure_topics({made: 3}, bootstrap)
    assert kafka_topics.partition_count(made, bootstrap) == 3
    with pytest.raises(BrokerError, match=f"topic {never} has no partitions"):
        kafka_topics.partition_count(never, bootstrap, timeout_s=1.0)


def test_a_topic_read_to_its_end_from_a_time_starts_at_that_time(bootstrap: str) -> None:
    # What the network faults test reads of its long frames topic: the records of a window, not all.
    from confluent_kafka import Producer

    from facestream import kafka_clients, kafka_reading

    topic = f"t-{uuid.uuid4().hex[:10]}.timed"
    kafka_topics.ensure_topics({topic: 3}, bootstrap)
    producer = kafka_clients.made(Producer, kafka_clients.client_config(bootstrap))
    for i in range(6):  # two a partition, an hour apart in their timestamps
        producer.produce(
            topic, value=str(i).encode(), partition=i % 3, timestamp=1_700_000_000_000 + 3_600_000 * (i // 3)
        )
    producer.flush(30)
    later = kafka_reading.read_to_end(topic, bootstrap, since_ms=1_700_000_000_000 + 1_800_000)
    assert sorted(r.value() for r in later) == [b"3", b"4", b"5"]
    assert len(kafka_reading.read_to_end(topic, bootstrap)) == 6
    assert kafka_reading.read_to_end(topic, bootstrap, since_ms=1_800_000_000_000) == []
