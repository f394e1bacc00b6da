"""A three-node cluster as a user starts it (``facestream kafka start --brokers 3``), on a home and
ports of its own, for the tests of faults of a cluster (tests/e2e/conftest.py has the fixtures)."""

import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from facestream import kafka_topics
from facestream.broker import LocalCluster


def free_block(size: int) -> int:
    """The first port of ``size`` consecutive free ones (a node takes two)."""
    for base in range(21000, 40000, 100):
        try:
            for port in range(base, base + size):
                with socket.socket() as probe:
                    probe.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
    raise RuntimeError("no block of free ports")


@contextmanager
def three_nodes(home: Path) -> Iterator[LocalCluster]:
    """The cluster started by the command, for the block; stopped by the command after it."""
    port = free_block(6)
    env = {**os.environ, "FACESTREAM_HOME": str(home), "FACESTREAM_KAFKA_PORT": str(port)}
    env.pop("KAFKA_BOOTSTRAP", None)
    kafka = [sys.executable, "-m", "facestream", "kafka"]
    started = subprocess.run([*kafka, "start", "--brokers", "3"], env=env, capture_output=True, text=True)
    assert started.returncode == 0, started.stderr[-3000:]
    nodes = LocalCluster(3, home / "kafka-cluster", port)
    assert f"export KAFKA_BOOTSTRAP={nodes.bootstrap}" in started.stdout
    try:
        yield nodes
    finally:
        subprocess.run([*kafka, "stop"], env=env, check=True)


def topics_on(cluster: LocalCluster) -> dict[str, str]:
    """Fresh frames, detections and dead-letter topics (4, 4 and 1 partitions) and a group name."""
    tag = uuid.uuid4().hex[:10]
    names = {part: f"t-{tag}.{part}" for part in ("frames", "detections", "dlq")}
    kafka_topics.ensure_topics({names["frames"]: 4, names["detections"]: 4, names["dlq"]: 1}, cluster.bootstrap)
    return {**names, "group": f"t-{tag}.detector"}


def until_in_sync(cluster: LocalCluster, topics: dict[str, str], since: float, timeout_s: float = 120.0) -> float:
    """Once every partition of the frames and detections ``topics`` has its three copies in sync: the
    seconds from ``since``."""
    deadline = time.monotonic() + timeout_s
    while not cluster.in_sync([topics["frames"], topics["detections"]]):
        assert time.monotonic() < deadline, "the partitions did not get their three copies back"
        time.sleep(0.5)
    return time.monotonic() - since
