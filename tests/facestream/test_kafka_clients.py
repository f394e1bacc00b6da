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
