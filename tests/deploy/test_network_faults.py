"""Hosts cut off from each other, for real: the compose file's cluster profile (three Kafka nodes, each
a container with its own address on the stack's podman network), its cameras and two detector
replicas, and faults made in one container's network namespace (helpers/network.py): a detector
cut off from everything for 30 s, the node leading ``frames`` partition 0 cut off from the other two
for 30 s, and 100 ms each way with 1% of packets lost between the cameras and the brokers; last, one
node killed with an alerting worker running too.

Each test accounts for the frames captured while its fault lasted and until the flow was whole again:
*sent* is the cameras' sequence numbers (one per frame taken, so a frame the camera gave up on is a
gap), *lost* = sent - answered with an event, *duplicates* = records beyond one per frame (frames
on their topic, events on theirs), and what the fault did to the time from capture to detection."""

import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType
from helpers.compose import ROOT, Stack, build_images, wait_for_records
from helpers.fault import keep_report
from helpers.http import free_port
from helpers.network import address, cut_off, slowed
from helpers.producer import wait_until

from facestream import kafka_clients, kafka_reading
from facestream.schemas import unpack_detection, unpack_frame

DETECTOR_GROUP = "facestream-detector"
PARTITIONS = 6
FPS = 4  # per camera, two cameras
CUT_S = 30
SLOW_S = 30  # each host's time behind the slow link, after a baseline of BASELINE_S without it
BASELINE_S = 20
NODES = {1: "kafka", 2: "kafka-2", 3: "kafka-3"}  # KAFKA_NODE_ID -> the compose service
STACK_TIMEOUT_S = 1800


@dataclass
class Cluster:
    stack: Stack
    ports: dict[str, int]  # compose service of a node -> its port on this host
    folder: Path

    @property
    def bootstrap(self) -> str:
        return ",".join(f"127.0.0.1:{port}" for port in self.ports.values())

    def container(self, service: str) -> str:
        return self.stack.containers(service)[0]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    folder = tmp_path_factory.mktemp("network-faults")
    build_images(folder / "images.log")
    ports = {service: free_port() for service in NODES.values()}
    stack = Stack(
        f"fsnet{uuid.uuid4().hex[:6]}",
        ("cpu", "cluster"),
        {
            "FACESTREAM_COMPOSE_KAFKA_PORT": str(ports["kafka"]),
            "FACESTREAM_COMPOSE_KAFKA_PORT_2": str(ports["kafka-2"]),
            "FACESTREAM_COMPOSE_KAFKA_PORT_3": str(ports["kafka-3"]),
            "FACESTREAM_PARTITIONS": str(PARTITIONS),
            "FACESTREAM_FPS": str(FPS),
            "FACESTREAM_DASHBOARD_PORT": str(free_port()),
            "FACESTREAM_MQTT_PORT": str(free_port()),
            "FACESTREAM_DB_PASSWORD": uuid.uuid4().hex,
        },
        folder / "compose.log",
        env_file=ROOT / "deploy" / "cluster.env",
    )
    with stack.running("cameras", "detector"):
        stack.compose("up", "-d", "--no-deps", "--scale", "detector=2", "detector")
        stack.wait_healthy("detector", timeout_s=300, count=2)
        found = Cluster(stack, ports, folder)
        broker_times(found.bootstrap)
        settled(found)
        yield found


def broker_times(bootstrap: str) -> None:
    """``frames`` records stamped with the time the broker appended them: the camera's leg of a frame's
    journey, measured per frame."""
    admin = kafka_clients.admin(bootstrap)
    change = ConfigEntry("message.timestamp.type", "LogAppendTime", incremental_operation=AlterConfigOpType.SET)
    resource = ConfigResource(ResourceType.TOPIC, "frames", incremental_configs=[change])
    for future in admin.incremental_alter_configs([resource]).values():
        future.result(timeout=30)


def settled(cluster: Cluster, timeout_s: float = 180) -> None:
    """Both replicas own partitions and every partition of ``frames`` has its three copies in sync."""
    wait_until(lambda: group_members(cluster.bootstrap) == [PARTITIONS // 2] * 2, timeout_s, "two replicas")
    wait_until(lambda: in_sync(cluster.bootstrap), timeout_s, "every copy in sync")


def group_members(bootstrap: str) -> list[int]:
    """The partitions each member of the detector group owns, most first."""
    admin = kafka_clients.admin(bootstrap, quiet=True)  # kept: its futures end with it
    try:
        members = admin.describe_consumer_groups([DETECTOR_GROUP])[DETECTOR_GROUP].result(timeout=10).members
    except Exception:  # a coordinator moving: ask again
        return []
    return sorted((len(m.assignment.topic_partitions) for m in members), reverse=True)


def leaders(bootstrap: str) -> dict[int, tuple[int, list[int]]]:
    """Each ``frames`` partition's leader and in-sync copies, as the brokers at ``bootstrap`` say."""
    topic = kafka_clients.admin(bootstrap, quiet=True).list_topics("frames", timeout=10).topics["frames"]
    return {p: (meta.leader, sorted(meta.isrs)) for p, meta in topic.partitions.items()}


def in_sync(bootstrap: str) -> bool:
    try:
        return all(len(isr) == 3 for _, isr in leaders(bootstrap).values())
    except Exception:  # no answer yet
        return False


def account(
    cluster: Cluster, fault: str, since_ns: int, until_ns: int, cameras: set[str] | None = None, **measured
) -> dict:
    """The report of the frames ``cameras`` (None: all) captured between ``since_ns`` and ``until_ns``,
    once every one of them has had time to be answered."""
    # Frames and events from the window on (the topics' timestamps are at or after capture): the
    # topics hold the whole module's run, hundreds of MB of photos by the last test.
    since_ms = since_ns // 1_000_000 - 1000
    records = kafka_reading.read_to_end("frames", cluster.bootstrap, timeout_s=60, since_ms=since_ms)
    appended = {}  # frame -> when the broker appended it (the topic's timestamps are LogAppendTime here)
    frames = []
    for record in records:
        frame = unpack_frame(record.value())
        if since_ns <= frame.capture_ts_ns <= until_ns and (cameras is None or frame.camera_id in cameras):
            frames.append(frame)
            appended[(frame.camera_id, frame.frame_seq)] = record.timestamp()[1] * 1_000_000
    seqs: dict[str, set[int]] = defaultdict(set)
    for frame in frames:
        seqs[frame.camera_id].add(frame.frame_seq)
    sent = sum(max(s) - min(s) + 1 for s in seqs.values())
    wanted = {(camera, seq) for camera, s in seqs.items() for seq in s}

    def answered() -> list:
        return [
            e
            for r in kafka_reading.read_to_end("detections", cluster.bootstrap, timeout_s=60, since_ms=since_ms)
            for e in [unpack_detection(r.value())]
            if (e.camera_id, e.frame_seq) in wanted
        ]

    deadline = time.monotonic() + 180
    events = answered()
    while len({(e.camera_id, e.frame_seq) for e in events}) < len(wanted) and time.monotonic() < deadline:
        time.sleep(2)
        events = answered()
    unique = {(e.camera_id, e.frame_seq): e for e in events}
    waits = sorted((e.detect_ts_ns - e.capture_ts_ns) / 1e6 for e in unique.values())
    to_broker = sorted((appended[(f.camera_id, f.frame_seq)] - f.capture_ts_ns) / 1e6 for f in frames)
    result = {
        "fault": fault,
        "sent": sent,
        "lost": sent - len(unique),
        "frame_duplicates": len(frames) - len(wanted),
        "event_duplicates": len(events) - len(unique),
        "offered_kB_s": round(sum(len(f.data) for f in frames) / 1000 / ((until_ns - since_ns) / 1e9)),
        "capture_to_broker_p50_ms": round(percentile(to_broker, 50)),
        "capture_to_broker_p99_ms": round(percentile(to_broker, 99)),
        "capture_to_broker_max_ms": round(to_broker[-1]) if to_broker else 0,
        "capture_to_detection_p50_ms": round(percentile(waits, 50)),
        "capture_to_detection_p99_ms": round(percentile(waits, 99)),
        "capture_to_detection_max_ms": round(waits[-1]) if waits else 0,
        **{k: round(v, 1) if isinstance(v, float) else v for k, v in measured.items()},
    }
    keep_report(result)
    print("fault report:", result)
    return result


def cut_and_healed(
    container: str, peers: list[str] | None, shows_cut: tuple[Callable[[], bool], str], shows_healed: tuple
) -> tuple[float, float]:
    """``container`` cut off from ``peers`` (None: from everything) for CUT_S: the seconds until
    ``shows_cut`` held, and from the end of the cut until ``shows_healed`` did; then 10 s more, so the
    frames after the recovery are counted too."""
    with cut_off(container, peers):
        cut = time.monotonic()
        wait_until(shows_cut[0], 60, shows_cut[1])
        during_s = time.monotonic() - cut
        time.sleep(max(0.0, CUT_S - during_s))
    healed = time.monotonic()
    wait_until(shows_healed[0], 180, shows_healed[1])
    after_s = time.monotonic() - healed
    time.sleep(10)
    return during_s, after_s


def percentile(ordered: list[float], q: float) -> float:
    return ordered[min(len(ordered) - 1, int(len(ordered) * q / 100))] if ordered else 0.0


@pytest.mark.timeout(STACK_TIMEOUT_S)
def test_a_detector_host_cut_off_for_30_s_hands_its_partitions_over_and_rejoins_by_itself(cluster: Cluster) -> None:
    settled(cluster)
    replica = cluster.stack.containers("detector")[0]
    since_ns = time.time_ns()
    moved_s, rejoined_s = cut_and_healed(
        replica,
        None,
        (lambda: group_members(cluster.bootstrap) == [PARTITIONS], "the other replica taking all"),
        (lambda: group_members(cluster.bootstrap) == [PARTITIONS // 2] * 2, "the replica rejoining"),
    )
    report = account(
        cluster,
        "detector host cut off 30 s",
        since_ns,
        time.time_ns(),
        moved_after_s=moved_s,
        rejoined_after_s=rejoined_s,
    )
    assert report["lost"] == 0 and report["frame_duplicates"] == 0, report


@pytest.mark.timeout(STACK_TIMEOUT_S)
def test_a_broker_cut_off_from_the_other_two_is_fenced_and_nothing_is_lost_or_written_twice(cluster: Cluster) -> None:
    settled(cluster)
    leader = leaders(cluster.bootstrap)[0][0]
    isolated = NODES[leader]
    others = [service for service in NODES.values() if service != isolated]
    majority = f"127.0.0.1:{cluster.ports[others[0]]}"  # asked first: the majority's view

    def fenced() -> bool:
        try:
            now = leaders(majority)
        except Exception:
            return False
        return all(lead != leader and leader not in isr for lead, isr in now.values())

    since_ns = time.time_ns()
    fenced_s, in_sync_s = cut_and_healed(
        cluster.container(isolated),
        [address(cluster.container(s)) for s in others],
        (fenced, f"node {leader} fenced by the other two"),
        (lambda: in_sync(majority), "every copy in sync again"),
    )
    report = account(
        cluster,
        f"node {leader} (leading frames/0) cut off from the other two 30 s",
        since_ns,
        time.time_ns(),
        fenced_after_s=fenced_s,
        in_sync_after_s=in_sync_s,
    )
    assert report["lost"] == 0 and report["frame_duplicates"] == 0, report


@pytest.mark.timeout(STACK_TIMEOUT_S)
def test_cameras_100_ms_from_the_brokers_with_1_percent_loss_lose_nothing(cluster: Cluster) -> None:
    """Two camera hosts, each behind the slow link in turn while the other streams as before (so the
    detector's load stays as it was): one more host with a 640x480 camera at 2 fps, then the compose
    file's cameras (photos of about 180 kB, 4 fps each: more than TCP carries over such a link)."""
    settled(cluster)
    heavy, light = {"portraits", "annotated"}, {"edge"}
    edge = f"{cluster.stack.project}_edge"
    cluster.stack.podman(
        "run", "-d", "--name", edge, "--network", f"{cluster.stack.project}_default",
        "-e", "KAFKA_BOOTSTRAP=kafka:9092,kafka-2:9092,kafka-3:9092", "localhost/facestream:0.1.0",
        "produce", "--camera", "edge", "--source", "/var/lib/facestream/samples/portraits",
        "--frame-size", "640x480", "--fps", "2", "--loop",
    )  # fmt: skip
    hosts = {"the 640x480 camera at 2 fps": (edge, light), "the compose cameras, photos at 4 fps": ("", heavy)}
    windows = {}
    try:
        since_ns = time.time_ns()
        time.sleep(BASELINE_S)
        baseline = (since_ns, time.time_ns())
        for name, (container, _) in hosts.items():
            since_ns = time.time_ns()
            with slowed(container or cluster.container("cameras"), 100, 0.01, cluster.folder / "link.log") as link:
                time.sleep(SLOW_S)
            windows[name] = (since_ns, time.time_ns(), link)
    finally:
        cluster.stack.podman("rm", "-f", "-t", "5", edge, check=False)
    for name, (_, group) in hosts.items():
        before = account(cluster, f"baseline (no fault): {name}", *baseline, group)
        since_ns, until_ns, link = windows[name]
        report = account(
            cluster,
            f"{name}: 100 ms each way from the brokers, 1% of packets lost, {SLOW_S} s",
            since_ns,
            until_ns,
            group,
            packets=link.get("packets", 0),
            packets_dropped=link.get("dropped", 0),
            baseline_to_broker_p50_ms=before["capture_to_broker_p50_ms"],
            baseline_to_broker_p99_ms=before["capture_to_broker_p99_ms"],
        )
        assert link.get("dropped", 0) > 0, link  # the loss happened
        assert report["lost"] == 0 and report["frame_duplicates"] == 0, report
        assert report["capture_to_broker_p50_ms"] >= before["capture_to_broker_p50_ms"] + 100, report


@pytest.mark.timeout(STACK_TIMEOUT_S)
def test_a_node_killed_leaves_the_cameras_the_detectors_and_alerting_streaming_and_loses_nothing(
    cluster: Cluster,
) -> None:
    """Last, as it leaves a node down: the cluster profile as an operator runs it, with an alerting
    worker too, and one node killed (SIGKILL, as a crash) while the cameras stream. Events and alerts
    keep coming, and every frame captured since is answered."""
    settled(cluster)
    stack = cluster.stack
    stack.compose("up", "-d", "--no-deps", "alerting")  # the stranger rule on the portraits camera
    stack.wait_healthy("alerting", timeout_s=300)
    wait_for_records(cluster.bootstrap, "alerts", lambda found: "stranger" in found, kind=True)
    killed_ns = time.time_ns()
    stack.podman("kill", cluster.container("kafka-2"))
    wait_until(lambda: fresh(cluster, "detections", killed_ns) >= 20, 120, "events after the node died")
    alerted_ns = time.time_ns()
    wait_until(lambda: fresh(cluster, "alerts", alerted_ns) > 0, 120, "alerts after the node died")
    report = account(cluster, "node kafka-2 killed", killed_ns, time.time_ns())
    assert report["lost"] == 0 and report["frame_duplicates"] == 0, report


def fresh(cluster: Cluster, topic: str, since_ns: int) -> int:
    """Records of ``topic`` timestamped after ``since_ns``."""
    return len(kafka_reading.read_to_end(topic, cluster.bootstrap, timeout_s=60, since_ms=since_ns // 1_000_000))
