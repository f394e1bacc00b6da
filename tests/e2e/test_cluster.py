"""Faults of a three-node cluster (``facestream kafka start --brokers 3``: three copies of every
partition, two needed to write) while cameras stream through two detector replicas, an alerting
worker and the dashboard. Each test reports frames produced, answered, lost and duplicated, the alert
records against those an undisturbed worker makes of the same events, how long a camera waited for
its next event after the fault, and how long until every partition had its three copies in sync again.
And a topic asked for while the cluster is still coming up."""

import logging
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
from helpers.fault import AlertsBeside, EventReader, live_cameras, replica, report, wait_for_line, wait_out

from facestream import kafka_clients, kafka_topics
from facestream.broker import LocalCluster

CAMERAS, FPS, SECONDS = 4, 5.0, 30.0


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


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory):
    """The cluster as a user starts it, on a home and ports of its own."""
    home, port = tmp_path_factory.mktemp("home"), free_block(6)
    env = {**os.environ, "FACESTREAM_HOME": str(home), "FACESTREAM_KAFKA_PORT": str(port)}
    env.pop("KAFKA_BOOTSTRAP", None)
    kafka = [sys.executable, "-m", "facestream", "kafka"]
    started = subprocess.run([*kafka, "start", "--brokers", "3"], env=env, capture_output=True, text=True)
    assert started.returncode == 0, started.stderr[-3000:]
    nodes = LocalCluster(3, home / "kafka-cluster", port)
    assert f"export KAFKA_BOOTSTRAP={nodes.bootstrap}" in started.stdout
    yield nodes
    subprocess.run([*kafka, "stop"], env=env, check=True)


@pytest.fixture
def topics(cluster: LocalCluster, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.setenv("KAFKA_BOOTSTRAP", cluster.bootstrap)  # every client and child process: the cluster
    tag = uuid.uuid4().hex[:10]
    names = {part: f"t-{tag}.{part}" for part in ("frames", "detections", "dlq")}
    kafka_topics.ensure_topics({names["frames"]: 4, names["detections"]: 4, names["dlq"]: 1}, cluster.bootstrap)
    return {**names, "group": f"t-{tag}.detector"}


def two_replicas(topics: dict, tmp_path: Path) -> dict[Path, object]:
    replicas = {log: replica(topics, log, stop_after_idle_s=12.0) for log in (tmp_path / "a.log", tmp_path / "b.log")}
    for log in replicas:  # started together: each start is seconds of imports and a model on two cores
        wait_for_line(log, "assigned t-")
    return replicas


def until_in_sync(cluster: LocalCluster, topics: dict, since: float, timeout_s: float = 120.0) -> float:
    deadline = time.monotonic() + timeout_s
    while not cluster.in_sync([topics["frames"], topics["detections"]]):
        assert time.monotonic() < deadline, "the partitions did not get their three copies back"
        time.sleep(0.5)
    return time.monotonic() - since


# The longest a camera may wait for its next event after a node dies. The goal is 15 s, met here in
# every run since the nodes fence a dead one within 3 s (docs/guarantees.md has the figures); a
# machine as loaded as CI's can stretch an election, so the tests hold this looser bound.
WAIT_BOUND_S = 30.0


@pytest.mark.parametrize("which", ["the node leading frames/0", "the active controller"])
def test_a_node_killed_and_started_again_loses_nothing(
    which: str, cluster: LocalCluster, topics: dict, sample_dir: Path, tmp_path: Path
) -> None:
    replicas = two_replicas(topics, tmp_path)
    beside = AlertsBeside(topics, tmp_path)
    reader = EventReader(topics["detections"])
    producer = live_cameras(topics, sample_dir / "obama.jpg", cameras=CAMERAS, fps=FPS, seconds=SECONDS)
    time.sleep(8.0)
    node = cluster.leader_of(topics["frames"], 0) if "frames" in which else cluster.active_controller()
    cluster.nodes[node].kill()
    killed = time.monotonic()
    time.sleep(10.0)
    cluster.nodes[node].start(wait=False)
    restarted = time.monotonic()
    in_sync_s = until_in_sync(cluster, topics, restarted)
    wait_out(producer, replicas, reader)
    holds(
        f"kill -9 of {which} (node {node} of 3), started again after 10 s",
        reader,
        beside,
        killed,
        in_sync_after_restart_s=in_sync_s,
    )


def holds(
    fault: str, reader: EventReader, beside: AlertsBeside, since: float, seconds: float = SECONDS, **measured
) -> None:
    """Report the fault, and check what each must hold: no frame lost, a frame answered twice (its
    offsets not committed when the fault came) under one event id, no alert state lost nor made up,
    and the wait after ``since`` bounded."""
    waited = reader.longest_gap(since)
    alerts = beside.settle()
    result = report(fault, int(CAMERAS * FPS * seconds), reader, longest_wait_s=waited, **alerts, **measured)
    assert result["lost"] == 0, result
    assert result["alert_states_lost"] == 0 and result["alert_records_unequal"] == 0, result
    assert result["longest_wait_s"] <= WAIT_BOUND_S, result
    ids: dict[tuple[str, int], set[str]] = {}
    for event in reader.events:
        ids.setdefault((event.camera_id, event.frame_seq), set()).add(event.event_id)
    assert all(len(found) == 1 for found in ids.values())


def test_a_rolling_restart_of_all_three_nodes_loses_nothing(
    cluster: LocalCluster, topics: dict, sample_dir: Path, tmp_path: Path
) -> None:
    replicas = two_replicas(topics, tmp_path)
    beside = AlertsBeside(topics, tmp_path)
    reader = EventReader(topics["detections"])
    producer = live_cameras(topics, sample_dir / "obama.jpg", cameras=CAMERAS, fps=FPS, seconds=45.0)
    time.sleep(5.0)
    started = time.monotonic()
    for node in cluster.nodes.values():  # as an operator upgrades: one at a time, each back in sync first
        node.stop()
        node.start(wait=False)
        until_in_sync(cluster, topics, time.monotonic())
    rolled_s = time.monotonic() - started
    wait_out(producer, replicas, reader)
    holds(
        "rolling restart of all 3 nodes, each back in sync before the next",
        reader,
        beside,
        started,
        45.0,
        rolled_in_s=rolled_s,
    )


def test_a_node_whose_disk_fills_up_loses_nothing(
    cluster: LocalCluster, topics: dict, sample_dir: Path, tmp_path: Path
) -> None:
    # The node's data moves to a small tmpfs (this machine lets root mount one), then a file fills it.
    node_id = cluster.leader_of(topics["frames"], 1)
    node = cluster.nodes[node_id]
    node.stop()
    on_disk = node.root / "data.on-disk"
    node.data.rename(on_disk)
    node.data.mkdir()
    size_mb = 64 + sum(f.stat().st_size for f in on_disk.rglob("*") if f.is_file()) // 2**20
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size_mb}m", "tmpfs", str(node.data)], text=True, capture_output=True
    )
    assert mounted.returncode == 0, f"a small disk for the node needs mount (root): {mounted.stderr}"
    try:
        shutil.copytree(on_disk, node.data, dirs_exist_ok=True)
        node.start(wait=False)
        until_in_sync(cluster, topics, time.monotonic())
        replicas = two_replicas(topics, tmp_path)
        beside = AlertsBeside(topics, tmp_path)
        reader = EventReader(topics["detections"])
        producer = live_cameras(topics, sample_dir / "obama.jpg", cameras=CAMERAS, fps=FPS, seconds=SECONDS)
        time.sleep(8.0)
        filled = time.monotonic()
        fill(node.data / "filler")
        time.sleep(10.0)
        (node.data / "filler").unlink()
        node.stop()  # its log directory went offline with the disk: a restart brings it back
        node.start(wait=False)
        in_sync_s = until_in_sync(cluster, topics, time.monotonic())
        wait_out(producer, replicas, reader)
        said = node.log_file.read_text(errors="replace")
    finally:
        node.stop()
        shutil.copytree(node.data, on_disk, dirs_exist_ok=True)
        subprocess.run(["umount", str(node.data)], check=True)
        node.data.rmdir()
        on_disk.rename(node.data)
        node.start(wait=False)
    assert "No space left on device" in said
    fault = f"the disk of a node leading frames/1 (node {node_id}) full for 10 s, then freed and the node restarted"
    holds(fault, reader, beside, filled, in_sync_after_restart_s=in_sync_s)


def fill(path: Path) -> None:
    """Write to ``path`` until its file system is full."""
    chunk = b"\0" * 2**20
    with open(path, "wb") as out:
        try:
            while True:
                out.write(chunk)
                out.flush()
        except OSError:
            pass


def test_a_topic_asked_for_before_every_node_has_joined_is_made_once_they_have(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Before: a service making its topics at start (the dashboard, alerting) exited on the cluster's
    # refusal while the cluster was still coming up, INVALID_REPLICATION_FACTOR (three copies asked,
    # two nodes registered); a restart policy brought it back. A cluster of its own: the module's has
    # every node registered for good (a stopped node stays registered, so its topics are made).
    nodes = LocalCluster(3, tmp_path / "kafka-cluster", free_block(6))
    name = f"t-{uuid.uuid4().hex[:10]}.made-late"
    try:
        for node in (1, 2):  # a quorum of controllers, two brokers
            nodes.nodes[node].start(wait=False)
        kafka_clients.check_reachable(nodes.nodes[1].bootstrap, timeout_s=90.0)
        last = threading.Timer(5.0, lambda: nodes.nodes[3].start(wait=False))
        last.start()
        try:
            with caplog.at_level(logging.WARNING, logger="facestream.kafka_clients"):
                kafka_topics.ensure_topics({name: 2}, nodes.bootstrap, timeout_s=120.0)
        finally:
            last.join()
        assert f"cannot create topic {name} yet" in caplog.text and "replicat" in caplog.text.lower()
        admin, deadline = kafka_clients.admin(nodes.bootstrap), time.monotonic() + 30
        while name not in (found := admin.list_topics(timeout=10).topics):  # a node answering may learn of it late
            assert time.monotonic() < deadline, f"{name} made, yet not in the cluster's metadata after 30 s"
            time.sleep(0.5)
        assert [len(p.replicas) for p in found[name].partitions.values()] == [3, 3]
    finally:
        nodes.stop()
