"""Helpers for tests that run the real commands against the real broker (see ``pythonpath`` in pyproject)."""

import os
import subprocess
import sys
import time

from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition

from facestream import kafka_clients


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


def detector_args(topics: dict[str, str], *extra: str) -> list[str]:
    return [
        "--group",
        topics["group"],
        "--frames-topic",
        topics["frames"],
        "--detections-topic",
        topics["detections"],
        "--dead-letter-topic",
        topics["dlq"],
        "--stop-after-idle",
        "4",
        "--stats-interval",
        "1",
        *extra,
    ]


def read_topic(bootstrap: str, topic: str, expected: int, timeout_s: float = 30.0) -> list:
    """Every record of ``topic`` from the start; waits until ``expected`` arrived, then a little more."""
    consumer = kafka_clients.viewer(topic, from_beginning=True, bootstrap=bootstrap)
    records, deadline, settle = [], time.monotonic() + timeout_s, None
    try:
        while time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None and not msg.error():
                records.append(msg)
            if len(records) >= expected:
                settle = settle or time.monotonic() + 2.0  # look for extra (duplicate) records
                if time.monotonic() > settle:
                    break
    finally:
        consumer.close()
    return records


def committed_total(bootstrap: str, group: str, topic: str) -> int:
    """The group's committed offsets over all partitions of ``topic`` (Kafka's admin API); none = 0."""
    admin = kafka_clients.admin(bootstrap)
    partitions = admin.list_topics(topic, timeout=10).topics[topic].partitions
    request = ConsumerGroupTopicPartitions(group, [TopicPartition(topic, p) for p in partitions])
    result = admin.list_consumer_group_offsets([request])[group].result()
    return sum(max(tp.offset, 0) for tp in result.topic_partitions)  # -1001: nothing committed
