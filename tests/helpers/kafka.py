"""Helpers for tests that run the real commands against the real broker (see ``pythonpath`` in pyproject)."""

import dataclasses
import os
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition

from facestream import kafka_clients, kafka_reading, kafka_topics, paths
from facestream.broker.local import LocalBroker
from facestream.config import command_line
from facestream.detector_service.config import DetectorConfig
from facestream.producers.config import ProducerConfig, producer_command


def make_topics(names: dict[str, str], bootstrap: str) -> None:
    """The ``topics`` fixture's frames, detections and dead-letter topics, on the broker at ``bootstrap``."""
    kafka_topics.ensure_topics({names["frames"]: 2, names["detections"]: 2, names["dlq"]: 1}, bootstrap)


@contextmanager
def broker_of_its_own(folder: Path) -> Iterator[LocalBroker]:
    """A broker for one test to stop and start (the session's serves the tests running beside it),
    sharing the session broker's jars; its clients find it through ``KAFKA_BOOTSTRAP``."""
    from helpers.secure import free_ports

    broker = LocalBroker(root=folder / "kafka", port=free_ports()[0], lib=paths.kafka_dir() / "lib")
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


def run_service(cmd: list[str], timeout_s: float = 180.0, env: dict | None = None) -> str:
    """Run a command (e.g. ``detector_command(...)``) to completion; return its combined output. A
    non-zero exit fails the test with the command's output."""
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, env={**os.environ, **(env or {})})
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"{' '.join(cmd[:3])} exited with {done.returncode}:\n{output[-4000:]}"
    return output


def photos_to(topic: str, cameras: dict[str, object], **changes) -> str:
    """Stream the photos of each camera's folder once, as fast as the broker takes them, numbered from 0."""
    config = ProducerConfig(fps=0.0, start_seq=0, frames_topic=topic)
    return run_service(producer_command(list(cameras.items()), config, **changes))


def detector_config(topics: dict[str, str], **changes) -> DetectorConfig:
    """A detector on a test's own topics and group, stopping 4 s after the last frame."""
    config = DetectorConfig(
        group=topics["group"],
        frames_topic=topics["frames"],
        detections_topic=topics["detections"],
        dead_letter_topic=topics["dlq"],
        stop_after_idle_s=4.0,
        stats_interval_s=1.0,
        start_at="earliest",  # tests produce first; how long before must not matter (test_faults checks --start-at)
    )
    return dataclasses.replace(config, **changes)


def detector_args(topics: dict[str, str], **changes) -> list[str]:
    """``facestream detect`` flags for ``detector_config``."""
    return command_line(detector_config(topics, **changes))


def read_topic(bootstrap: str, topic: str, expected: int, timeout_s: float = 30.0) -> list:
    """Every record of ``topic`` from the start; waits until ``expected`` arrived, then 2 s more for
    extra (duplicate) records. With ``expected`` 0, what was written before the call, to its end (a
    loaded machine may take longer than 2 s to read a stopped producer's frames)."""
    if not expected:
        return kafka_reading.read_to_end(topic, bootstrap, timeout_s)
    records, deadline = [], time.monotonic() + timeout_s

    def done() -> bool:
        nonlocal deadline
        if len(records) >= expected:
            deadline = min(deadline, time.monotonic() + 2.0)
        return time.monotonic() > deadline

    for msg in kafka_reading.records(topic, done, bootstrap=bootstrap):
        records.append(msg)
    return records


def committed_total(bootstrap: str, group: str, topic: str) -> int:
    """The group's committed offsets over all partitions of ``topic`` (Kafka's admin API); none = 0."""
    admin = kafka_clients.admin(bootstrap)
    partitions = admin.list_topics(topic, timeout=10).topics[topic].partitions
    request = ConsumerGroupTopicPartitions(group, [TopicPartition(topic, p) for p in partitions])
    result = admin.list_consumer_group_offsets([request])[group].result()
    return sum(max(tp.offset, 0) for tp in result.topic_partitions)  # -1001: nothing committed
