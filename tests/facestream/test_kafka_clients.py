"""The pipeline's partition count, from one place."""

import pytest

from facestream import kafka_clients
from facestream.errors import ConfigError


def test_the_pipeline_partition_count_comes_from_one_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FACESTREAM_PARTITIONS", raising=False)
    assert kafka_clients.pipeline_partitions() == 4
    monkeypatch.setenv("FACESTREAM_PARTITIONS", "12")
    assert kafka_clients.pipeline_partitions() == 12
    for wrong in ("0", "six", "-2"):
        monkeypatch.setenv("FACESTREAM_PARTITIONS", wrong)
        with pytest.raises(ConfigError, match="FACESTREAM_PARTITIONS"):
            kafka_clients.pipeline_partitions()
