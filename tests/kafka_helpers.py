"""Helpers for tests that run the real commands against the real broker (see ``pythonpath`` in pyproject)."""

import os
import subprocess
import sys
import time

from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition

from facestream import kafka_clients
from facestream.config import command_line
from facestream.detector_service.config import DetectorConfig


def run_service(module: str, args: list[str], timeout_s: float = 180.0, env: dict | None = None) -> str:
    """Run ``python -m module args`` to completion; return its combined output, fail loudly on error."""
    done = subprocess.run(
        [sys.executable, "-m", module, *args],
        capture_output=True,
        text=True,
        timeout=timeout_s,
        env={**os.environ, **(env or {})},
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"{module} exited with {done.returncode}:\n{output[-4000:]}"
    return output


def detector_args(topics: dict[str, str], **changes) -> list[str]:
    """``facestream detect`` flags for a test's own topics and group, stopping 4 s after the last frame."""
    config = DetectorConfig(
        group=topics["group"],
        frames_topic=topics["frames"],
        detections_topic=topics["detections"],
        dead_letter_topic=topics["dlq"],
        stop_after_idle=4.0,
        stats_interval=1.0,
    )
    return command_line(config, **changes)


def read_topic(bootstrap: str, topic: str, expected: int, timeout_s: float = 30.0) -> list:
    """Every record of ``topic`` from the start; waits until ``expected`` arrived, then 2 s more for
    extra (duplicate) records."""
    records, deadline = [], time.monotonic() + timeout_s

    def done() -> bool:
        nonlocal deadline
        if len(records) >= expected:
            deadline = min(deadline, time.monotonic() + 2.0)
        return time.monotonic() > deadline

    for msg in kafka_clients.records(topic, done, bootstrap=bootstrap):
        records.append(msg)
    return records


def committed_total(bootstrap: str, group: str, topic: str) -> int:
    """The group's committed offsets over all partitions of ``topic`` (Kafka's admin API); none = 0."""
    admin = kafka_clients.admin(bootstrap)
    partitions = admin.list_topics(topic, timeout=10).topics[topic].partitions
    request = ConsumerGroupTopicPartitions(group, [TopicPartition(topic, p) for p in partitions])
    result = admin.list_consumer_group_offsets([request])[group].result()
    return sum(max(tp.offset, 0) for tp in result.topic_partitions)  # -1001: nothing committed
