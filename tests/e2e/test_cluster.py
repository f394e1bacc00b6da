"""Faults of a three-node cluster (``facestream kafka start --brokers 3``: three copies of every
partition, two needed to write) while cameras stream through two detector replicas, an alerting
worker and the dashboard. Each test reports frames produced, answered, lost and duplicated, the alert
records against those an undisturbed worker makes of the same events, how long a camera waited for
its next event after the fault, and how long until every partition had its three copies in sync again.
And a topic asked for while the cluster is still coming up.

Last, exactly once under faults in rounds, as Jepsen tests Kafka's transactions: cameras stream
through two detector replicas (each started again, as a supervisor would, when it stops), one fault a
round, the kinds in turn: the leader of an events partition killed (-9) and started again, and the
node coordinating a replica's transactions (at least once: the group's coordinator) stopped and
started again. Once the cameras stop and the group has caught up, a checker reads the events
read_committed and read_uncommitted and counts

- lost frames: frames on the topic never answered under read_committed (and, apart, frames the
  cameras numbered but never got onto the topic);
- duplicates under read_committed: a frame's events beyond one;
- aborted reads: events visible to read_committed of a transaction not wholly visible (every record
  says its transaction: ``transactions.HEADER``; an aborted one must be invisible whole);
- events out of order: per camera (one partition each, in offset order), a frame_seq at or below the
  one before it.

``make test`` runs one round of each kind, exactly-once only. The figures in docs/guarantees.md:
``FACESTREAM_FAULT_ROUNDS=20 FACESTREAM_FAULT_MODES=exactly-once,at-least-once
FACESTREAM_FAULT_RESULT=bench/results/transactions-under-faults.json python -m pytest -s
tests/e2e/test_cluster.py -k rounds``."""

import json
import logging
import os
import re
import shutil
import signal
import subprocess
import threading
import time
import uuid
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition
from helpers.cluster import free_block, until_in_sync
from helpers.fault import (
    AlertsBeside,
    EventReader,
    keep_report,
    live_cameras,
    replica,
    report,
    wait_for_line,
    wait_out,
)

from facestream import kafka_clients, kafka_topics
from facestream.broker import LocalCluster
from facestream.detector_service.kafka.transactions import HEADER
from facestream.schemas import unpack_detection, unpack_frame

CAMERAS, FPS, SECONDS = 4, 5.0, 30.0


def two_replicas(topics: dict, tmp_path: Path) -> dict[Path, object]:
    replicas = {log: replica(topics, log, stop_after_idle_s=12.0) for log in (tmp_path / "a.log", tmp_path / "b.log")}
    for log in replicas:  # started together: each start is seconds of imports and a model on two cores
        wait_for_line(log, "assigned t-")
    return replicas


# The longest a camera may wait for its next event after a node dies. The goal is 15 s, met here in
# every run since the nodes fence a dead one within 3 s (docs/guarantees.md has the figures); a
# machine as loaded as CI's can stretch an election, so the tests hold this looser bound.
WAIT_BOUND_S = 30.0


@pytest.mark.parametrize("which", ["the node leading frames/0", "the active controller"])
def test_a_node_killed_and_started_again_loses_nothing(
    which: str, cluster: LocalCluster, cluster_topics: dict, sample_dir: Path, tmp_path: Path
) -> None:
    replicas = two_replicas(cluster_topics, tmp_path)
    beside = AlertsBeside(cluster_topics, tmp_path)
    reader = EventReader(cluster_topics["detections"])
    producer = live_cameras(cluster_topics, sample_dir / "obama.jpg", cameras=CAMERAS, fps=FPS, seconds=SECONDS)
    time.sleep(8.0)
    node = cluster.leader_of(cluster_topics["frames"], 0) if "frames" in which else cluster.active_controller()
    cluster.nodes[node].kill()
    killed = time.monotonic()
    time.sleep(10.0)
    cluster.nodes[node].start(wait=False)
    restarted = time.monotonic()
    in_sync_s = until_in_sync(cluster, cluster_topics, restarted)
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
    cluster: LocalCluster, cluster_topics: dict, sample_dir: Path, tmp_path: Path
) -> None:
    replicas = two_replicas(cluster_topics, tmp_path)
    beside = AlertsBeside(cluster_topics, tmp_path)
    reader = EventReader(cluster_topics["detections"])
    producer = live_cameras(cluster_topics, sample_dir / "obama.jpg", cameras=CAMERAS, fps=FPS, seconds=45.0)
    time.sleep(5.0)
    started = time.monotonic()
    for node in cluster.nodes.values():  # as an operator upgrades: one at a time, each back in sync first
        node.stop()
        node.start(wait=False)
        until_in_sync(cluster, cluster_topics, time.monotonic())
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
    cluster: LocalCluster, cluster_topics: dict, sample_dir: Path, tmp_path: Path
) -> None:
    # The node's data moves to a small tmpfs (this machine lets root mount one), then a file fills it.
    node_id = cluster.leader_of(cluster_topics["frames"], 1)
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
        until_in_sync(cluster, cluster_topics, time.monotonic())
        replicas = two_replicas(cluster_topics, tmp_path)
        beside = AlertsBeside(cluster_topics, tmp_path)
        reader = EventReader(cluster_topics["detections"])
        producer = live_cameras(cluster_topics, sample_dir / "obama.jpg", cameras=CAMERAS, fps=FPS, seconds=SECONDS)
        time.sleep(8.0)
        filled = time.monotonic()
        fill(node.data / "filler")
        time.sleep(10.0)
        (node.data / "filler").unlink()
        node.stop()  # its log directory went offline with the disk: a restart brings it back
        node.start(wait=False)
        in_sync_s = until_in_sync(cluster, cluster_topics, time.monotonic())
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
    # Before: a service making its cluster_topics at start (the dashboard, alerting) exited on the cluster's
    # refusal while the cluster was still coming up, INVALID_REPLICATION_FACTOR (three copies asked,
    # two nodes registered); a restart policy brought it back. A cluster of its own: the module's has
    # every node registered for good (a stopped node stays registered, so its cluster_topics are made).
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


ROUNDS = int(os.environ.get("FACESTREAM_FAULT_ROUNDS", "1"))  # of each kind
MODES = os.environ.get("FACESTREAM_FAULT_MODES", "exactly-once").split(",")
RESULT = os.environ.get("FACESTREAM_FAULT_RESULT")
LEAD_S = 4.0  # streaming before the first fault
SETTLE_S = 2.0  # after each fault's recovery, before the next
DOWN_S = 5.0  # a killed leader's time down
IDLE_S = 30.0  # a replica stops this long after its last frame: never during the rounds
INTERNAL_PARTITIONS = 50  # of __transaction_state and __consumer_offsets (Kafka's default)


def java_hash(text: str) -> int:
    """Java's ``String.hashCode``, as Kafka places a transactional id or a group on its coordinator."""
    value = 0
    for char in text:
        value = (31 * value + ord(char)) & 0xFFFFFFFF
    return value


def coordinator(cluster: LocalCluster, topic: str, key: str) -> int:
    """The node coordinating ``key`` (a transactional id on ``__transaction_state``, a group on
    ``__consumer_offsets``): the leader of its partition, ``abs(hashCode) % 50``."""
    return cluster.leader_of(topic, (java_hash(key) & 0x7FFFFFFF) % INTERNAL_PARTITIONS)


class Crew:
    """Two detector replicas of the test's group, each started again when it stops (its exit and last
    words noted), until ``finish``."""

    def __init__(self, topics: dict, folder: Path, exactly_once: bool) -> None:
        self.topics, self.folder, self.exactly_once = topics, folder, exactly_once
        self.running: dict[str, tuple[subprocess.Popen, Path]] = {}
        self.exits: list[str] = []
        self._starts: Counter = Counter()
        self._open = threading.Event()
        self._open.set()
        for name in ("a", "b"):
            self._start(name)
        for _, log in self.running.values():
            wait_for_line(log, "assigned t-", timeout_s=120.0)
        self._watcher = threading.Thread(target=self._watch, daemon=True)
        self._watcher.start()

    def _start(self, name: str) -> None:
        self._starts[name] += 1
        log = self.folder / f"{name}-{self._starts[name]}.log"
        process = replica(self.topics, log, exactly_once=self.exactly_once, stop_after_idle_s=IDLE_S)
        self.running[name] = (process, log)

    def _watch(self) -> None:
        while self._open.is_set():
            for name, (process, log) in list(self.running.items()):
                if process.poll() is not None and self._open.is_set():
                    said = [  # its last words: the error, a traceback's last line, or why it stopped
                        line
                        for line in log.read_text(errors="replace").splitlines()
                        if not line.startswith("%") and re.search(r"error|exception|stopping", line, re.IGNORECASE)
                    ]
                    self.exits.append(f"{log.name} exit {process.returncode}: {said[-1][-300:] if said else ''}")
                    self._start(name)
            time.sleep(0.5)

    def transactional_ids(self) -> list[str]:
        """The running replicas' transactional ids, as each logged it at its start."""
        found = []
        for _, log in self.running.values():
            match = re.search(r"transactional\.id (\S+)", log.read_text(errors="replace"))
            if match:
                found.append(match.group(1))
        return found

    def finish(self, bootstrap: str, timeout_s: float = 240.0) -> None:
        """Once the group has answered and committed every frame on the topic: stop."""
        deadline = time.monotonic() + timeout_s
        while lag := kafka_topics.group_lag(self.topics["group"], self.topics["frames"], bootstrap):
            assert time.monotonic() < deadline, f"the group is still {lag} frames behind after {timeout_s:.0f} s"
            time.sleep(1.0)
        self._open.clear()
        self._watcher.join(timeout=10)
        for process, _ in self.running.values():
            process.send_signal(signal.SIGTERM)
        for process, log in self.running.values():
            assert process.wait(timeout=120) in (0, -signal.SIGTERM), log.read_text(errors="replace")[-3000:]


def leader_killed(cluster: LocalCluster, topics: dict, crew: Crew, number: int) -> int:
    """``kill -9`` of the node leading events partition ``number % 4``; started again DOWN_S later."""
    node = cluster.leader_of(topics["detections"], number % 4)
    cluster.nodes[node].kill()
    time.sleep(DOWN_S)
    cluster.nodes[node].start(wait=False)
    until_in_sync(cluster, topics, time.monotonic())
    return node


def coordinator_restarted(cluster: LocalCluster, topics: dict, crew: Crew, number: int) -> int:
    """The node coordinating a replica's transactions (at least once: the group's) stopped and
    started again."""
    ids = crew.transactional_ids()
    if crew.exactly_once and ids:
        node = coordinator(cluster, "__transaction_state", ids[number % len(ids)])
    else:
        node = coordinator(cluster, "__consumer_offsets", topics["group"])
    cluster.nodes[node].stop()
    cluster.nodes[node].start(wait=False)
    until_in_sync(cluster, topics, time.monotonic())
    return node


FAULTS = {"leader kill -9": leader_killed, "coordinator restart": coordinator_restarted}


def read_all(bootstrap: str, topic: str, isolation: str, timeout_s: float = 120.0) -> list:
    """Every record of ``topic`` as a reader with ``isolation`` sees it, to each partition's end (the
    end a read_committed reader reaches: control records are never delivered, so it is the end of
    partition, not the high watermark, that says done)."""
    settings = {
        "group.id": "facestream-reader-audit",
        "enable.auto.commit": False,
        "enable.partition.eof": True,
        "isolation.level": isolation,
    }
    consumer = kafka_clients.made(Consumer, kafka_clients.client_config(bootstrap, **settings))
    try:
        partitions = list(consumer.list_topics(topic, timeout=30).topics[topic].partitions)
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions])
        left, found, deadline = set(partitions), [], time.monotonic() + timeout_s
        while left:
            assert time.monotonic() < deadline, f"{topic} not read to its end ({isolation}) in {timeout_s:.0f} s"
            msg = consumer.poll(1.0)
            if msg is None:
                continue
            if msg.error():
                if msg.error().code() == KafkaError._PARTITION_EOF:
                    left.discard(msg.partition())
                continue
            found.append(msg)
        return found
    finally:
        consumer.close()


def transaction_of(msg) -> str | None:
    return next((value.decode() for key, value in msg.headers() or [] if key == HEADER), None)


def check(bootstrap: str, topics: dict) -> dict:
    """The checker's counts over what the cameras numbered, the frames topic and both views of the events."""
    frames = {
        (f.camera_id, f.frame_seq)
        for f in (unpack_frame(m.value()) for m in read_all(bootstrap, topics["frames"], "read_uncommitted"))
    }
    numbered: dict[str, set[int]] = defaultdict(set)
    for camera, seq in frames:
        numbered[camera].add(seq)
    never_written = sum(max(s) - min(s) + 1 - len(s) for s in numbered.values())
    views = {}
    for isolation in ("read_committed", "read_uncommitted"):
        views[isolation] = [
            (unpack_detection(m.value()), transaction_of(m), m.partition(), m.offset())
            for m in read_all(bootstrap, topics["detections"], isolation)
        ]
    seen = views["read_committed"]
    answered = {(e.camera_id, e.frame_seq) for e, *_ in seen}
    visible, written = (Counter(t for _, t, *_ in views[v] if t) for v in ("read_committed", "read_uncommitted"))
    out_of_order = 0
    by_camera: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for event, _, _, offset in seen:
        by_camera[event.camera_id].append((offset, event.frame_seq))
    for pairs in by_camera.values():
        seqs = [seq for _, seq in sorted(pairs)]
        out_of_order += sum(b <= a for a, b in zip(seqs, seqs[1:]))
    return {
        "frames": len(frames),
        "frames_never_written": never_written,
        "lost": len(frames - answered),
        "events_read_committed": len(seen),
        "duplicates_read_committed": len(seen) - len(answered),
        "events_read_uncommitted": len(views["read_uncommitted"]),
        "transactions_committed": len(visible),
        "transactions_aborted": sum(1 for t in written if t not in visible),
        "aborted_reads": sum(count for t, count in visible.items() if count < written[t]),
        "out_of_order": out_of_order,
    }


def keep_result(path: Path, run: dict) -> None:
    """``run`` added to the result file at ``path`` (made on the first run), as bench/results keeps them."""
    from bench.machine import describe

    found = (
        json.loads(path.read_text())
        if path.exists()
        else {
            "benchmark": "transactions-under-faults",
            "command": f"FACESTREAM_FAULT_ROUNDS={ROUNDS} FACESTREAM_FAULT_MODES={','.join(MODES)} "
            f"FACESTREAM_FAULT_RESULT={path} python -m pytest -s tests/e2e/test_cluster.py -k rounds",
            "machine": describe(),
            "settings": {"rounds_per_kind": ROUNDS, "cameras": CAMERAS, "fps": FPS, "down_s": DOWN_S},
            "runs": [],
        }
    )
    found["runs"].append(run)
    path.write_text(json.dumps(found, indent=1) + "\n")


@pytest.mark.slow
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("mode", MODES)
def test_rounds_of_faults_lose_nothing_and_exactly_once_shows_each_event_once(
    mode: str, cluster: LocalCluster, cluster_topics: dict, sample_dir: Path, tmp_path: Path
) -> None:
    exactly_once = mode == "exactly-once"
    rounds = [kind for _ in range(ROUNDS) for kind in FAULTS]
    cameras = live_cameras(cluster_topics, sample_dir / "obama.jpg", CAMERAS, FPS, seconds=24 * 3600.0)
    crew = Crew(cluster_topics, tmp_path, exactly_once)
    time.sleep(LEAD_S)
    nodes: dict[str, list[int]] = defaultdict(list)
    started = time.monotonic()
    for number, kind in enumerate(rounds):
        nodes[kind].append(FAULTS[kind](cluster, cluster_topics, crew, number))
        time.sleep(SETTLE_S)
    faults_s = time.monotonic() - started
    cameras.send_signal(signal.SIGTERM)  # each camera's frames so far flushed, then it stops
    assert cameras.wait(timeout=60) in (0, -signal.SIGTERM)
    crew.finish(cluster.bootstrap)
    result = {
        "fault": f"{len(rounds)} rounds ({', '.join(f'{k} x{len(v)}' for k, v in nodes.items())}), {mode}",
        "mode": mode,
        "rounds": {kind: len(v) for kind, v in nodes.items()},
        "nodes": dict(nodes),
        "faults_s": round(faults_s, 1),
        "replica_exits": len(crew.exits),
        **check(cluster.bootstrap, cluster_topics),
    }
    keep_report(result)
    print("fault report:", json.dumps(result), "\nreplica exits:", *crew.exits, sep="\n")
    if RESULT:
        keep_result(Path(RESULT), {**result, "exits": crew.exits})
    assert result["lost"] == 0 and result["out_of_order" if exactly_once else "lost"] == 0, result
    if exactly_once:
        assert (result["duplicates_read_committed"], result["aborted_reads"]) == (0, 0), result
