"""docker-compose.yml, started for real: podman and podman-compose on this machine, the CPU profile
(the cluster profile's three nodes: test_network_faults.py), the project's images built from the file. No
registry is reachable here, so deploy/local-images.sh first builds the base images the Dockerfiles
name (a Debian root file system from debootstrap, with Python; Kafka from Maven Central's jars) under
their official names; see helpers/compose.py for what podman 4.3 cannot do and what stands in for it."""

import json
import time
import uuid
from pathlib import Path

import pytest
from helpers.accounts import Client
from helpers.compose import ADMIN_PASSWORD, Stack, build_images, values, wait_for_records
from helpers.http import free_port
from helpers.kafka import committed_total
from helpers.producer import wait_until
from helpers.receiver import retained

from facestream import kafka_clients
from facestream.schemas import unpack_detection, unpack_frame

PARTITIONS = 6  # FACESTREAM_PARTITIONS: room for the three detector replicas, and more
DETECTOR_GROUP = "facestream-detector"
# Building the images is part of the first test (minutes, more with a changed Dockerfile), and the
# stack's start and stop are slow on two cores: beyond the suite's 600 s for a test.
STACK_TIMEOUT_S = 1800


@pytest.mark.timeout(STACK_TIMEOUT_S)
def test_the_compose_file_runs_the_stack_and_scales_the_detector(tmp_path: Path) -> None:
    build_images(tmp_path / "images.log")
    kafka_port, page_port, mqtt_port = free_port(), free_port(), free_port()
    stack = Stack(
        f"fstest{uuid.uuid4().hex[:6]}",
        ("cpu",),
        {
            "FACESTREAM_COMPOSE_KAFKA_PORT": str(kafka_port),
            "FACESTREAM_DASHBOARD_PORT": str(page_port),
            "FACESTREAM_PARTITIONS": str(PARTITIONS),
            "FACESTREAM_MQTT_PORT": str(mqtt_port),
            "FACESTREAM_DB_PASSWORD": uuid.uuid4().hex,
            "FACESTREAM_ADMIN_PASSWORD": ADMIN_PASSWORD,
        },
        tmp_path / "compose.log",
    )
    bootstrap = f"127.0.0.1:{kafka_port}"
    page = Client(page_port)
    with stack.running():
        for service in ("detector", "pose", "alerting", "alert-store", "notifier", "dashboard"):
            stack.wait_healthy(service, timeout_s=300)

        # Events and alerts flow, read from the host through the published port.
        cameras = wait_for_records(bootstrap, "detections", lambda found: {"portraits", "annotated"} <= found)
        kinds = wait_for_records(bootstrap, "alerts", lambda found: {"stranger", "fall"} <= found, kind=True)
        assert {"portraits", "annotated"} <= cameras and {"stranger", "fall"} <= kinds
        assert page.call("GET", "/api/state")[0] == 401  # the accounts service made the admin; nobody else
        page.sign_in("admin", ADMIN_PASSWORD)
        status, body = page.call("GET", "/api/state")
        assert status == 200 and {c["camera_id"] for c in json.loads(body)["cameras"]} == {
            "portraits",
            "annotated",
            "corridor",
            "lobby",
        }

        # Kept in PostgreSQL by the store, read back by the history; told to MQTT, retained, for Home Assistant.
        def stored_kinds() -> set[str]:
            status, body = page.call("GET", "/api/alerts?limit=200")
            return {a["kind"] for a in json.loads(body)["alerts"]} if status == 200 else set()

        wait_until(lambda: {"stranger", "fall"} <= stored_kinds(), 180, "alerts in the history")
        wait_until(lambda: "facestream/portraits/stranger" in retained(mqtt_port), 120, "the notifier's MQTT state")
        state = retained(mqtt_port)
        assert state["facestream/available"] == b"online"
        assert "homeassistant/binary_sensor/facestream_facestream_portraits_stranger/config" in state

        # Three replicas share the detector group's partitions, then one takes them all again.
        stack.compose("up", "-d", "--no-deps", "--scale", "detector=3", "detector")
        assert len(stack.wait_healthy("detector", timeout_s=300, count=3)) == 3
        assert members_with_partitions(bootstrap, 3) == 3
        stack.compose("up", "-d", "--no-deps", "--scale", "detector=1", "detector")
        for extra in stack.containers("detector")[1:]:  # what scaling in leaves running, stopped as compose does
            stack.podman("stop", "-t", "30", extra)
        assert len(stack.containers("detector")) == 1
        assert members_with_partitions(bootstrap, 1) == 1

        every_frame_answered(stack, bootstrap)


def every_frame_answered(stack: Stack, bootstrap: str) -> None:
    """Nothing lost: the cameras stop, the detector catches up, every frame has its event."""
    stack.compose("stop", "cameras")
    frames = {(f.camera_id, f.frame_seq) for f in map(unpack_frame, values(bootstrap, "frames"))}
    wait_until_committed(bootstrap, len(frames))
    events = {(e.camera_id, e.frame_seq) for e in map(unpack_detection, values(bootstrap, "detections"))}
    assert frames and frames <= events, f"{len(frames - events)} of {len(frames)} frames lost"


def members_with_partitions(bootstrap: str, count: int, timeout_s: float = 120) -> int:
    """Once the detector group has ``count`` members and each owns partitions: ``count``."""
    admin = kafka_clients.admin(bootstrap)
    deadline = time.monotonic() + timeout_s
    while True:
        group = admin.describe_consumer_groups([DETECTOR_GROUP])[DETECTOR_GROUP].result()
        owned = [len(m.assignment.topic_partitions) for m in group.members]
        if len(owned) == count and all(owned) and sum(owned) == PARTITIONS:
            return count
        assert time.monotonic() < deadline, f"the detector group has partitions {owned}, wanted {count} members"
        time.sleep(2)


def wait_until_committed(bootstrap: str, frames: int, timeout_s: float = 180) -> None:
    deadline = time.monotonic() + timeout_s
    while committed_total(bootstrap, DETECTOR_GROUP, "frames") < frames:
        assert time.monotonic() < deadline, "the detector did not catch up with the frames"
        time.sleep(2)
