"""Least privilege on a broker with Kafka's authorizer: ``facestream kafka acls`` gives each role's
user (SCRAM over TLS) only its own topics and groups. The pipeline runs with those users, each its
own; a camera's credentials cannot read detections nor forge alerts, a dashboard's cannot write but
the gallery, and every refusal is a clear error from the command that met it."""

import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from helpers.accounts import Client, api_token, make_users
from helpers.http import free_port
from helpers.kafka import run_service
from helpers.secure import certificate, free_ports

from facestream import kafka_clients, kafka_reading, paths
from facestream.alert_store.config import AlertStoreConfig, alert_store_command
from facestream.alerting.config import AlertingConfig, alerting_command
from facestream.broker.local import LocalBroker, SecureListener
from facestream.dashboard.config import DashboardConfig, dashboard_command
from facestream.detector_service.config import DetectorConfig, detector_command
from facestream.producers.config import ProducerConfig, producer_command
from facestream.schemas import unpack_alert
from facestream.tools.acls import ROLES

FACESTREAM = [sys.executable, "-m", "facestream"]
REFUSED = "Kafka's ACLs do not let user"


@pytest.fixture(scope="module")
def cluster(bootstrap: str, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A broker of its own with an admin and one user per role (and an intruder, given a role later),
    the pipeline's topics and the roles' ACLs written by ``facestream kafka acls`` as the admin."""
    folder = tmp_path_factory.mktemp("acl-kafka")
    keystore, ca = certificate(folder)
    port, secure_port = free_ports()
    users = {name: f"{name}-{uuid.uuid4().hex[:8]}" for name in (*ROLES, "admin", "intruder")}
    listener = SecureListener(secure_port, keystore, "keypass", users, admins=("admin",))
    broker = LocalBroker(root=folder / "kafka", port=port, secure=listener, lib=paths.kafka_dir() / "lib")
    broker.start()
    access = {}
    for name, password in users.items():
        access[name] = folder / f"{name}.properties"
        access[name].write_text(
            "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\n"
            f"sasl.username={name}\nsasl.password={password}\nssl.ca.location={ca}\n"
        )
    found = {"bootstrap": f"127.0.0.1:{secure_port}", "access": access}
    try:
        granted = run_service([*FACESTREAM, "kafka", "acls"], env=as_user(found, "admin"))
        assert "ACLs for 7 roles written" in granted, granted
        yield found
    finally:
        broker.stop()


def as_user(cluster: dict, user: str) -> dict[str, str]:
    """The environment of a command that reaches the cluster as ``user``."""
    return {"KAFKA_BOOTSTRAP": cluster["bootstrap"], "FACESTREAM_KAFKA_CONFIG": str(cluster["access"][user])}


def attempt(cmd: list[str], env: dict, timeout_s: float = 120.0) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, env={**os.environ, **env})


def background(cmd: list[str], env: dict, log: Path) -> subprocess.Popen:
    with open(log, "wb") as out:
        return subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env={**os.environ, **env})


def test_the_pipeline_runs_with_each_role_only_its_own(
    cluster: dict, sample_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    footage = tmp_path / "door"
    footage.mkdir()
    for index in range(4):  # one stranger, seen four times
        shutil.copy(sample_dir / "obama.jpg", footage / f"{index}.jpg")
    # 4 frames a second: each is followed (faces are, at most 5 times a second), so each is a sighting
    camera = producer_command([("door", str(footage))], ProducerConfig(fps=4.0, start_seq=0))
    run_service(camera, env=as_user(cluster, "camera"))
    detector = DetectorConfig(embedder="sface", provider="cpu", stop_after_idle_s=4.0, start_at="earliest")
    run_service(detector_command(detector), env=as_user(cluster, "detector"))
    port, database = free_port(), f"sqlite:///{tmp_path / 'alerts.db'}"
    page_user = Client(port, token=_operator(database))
    logs = {name: tmp_path / f"{name}.log" for name in ("alerting", "dashboard")}
    alerting = AlertingConfig(stranger={"sightings": 2}, stats_interval_s=1.0)
    workers = [
        background(alerting_command(alerting), as_user(cluster, "alerting"), logs["alerting"]),
        background(
            dashboard_command(DashboardConfig(http_port=port, database=database)),
            as_user(cluster, "dashboard"),
            logs["dashboard"],
        ),
    ]
    try:
        for name, value in as_user(cluster, "dashboard").items():
            monkeypatch.setenv(name, value)  # this process reads the alerts as the dashboard
        alerts = []
        deadline = time.monotonic() + 90
        while not any(a.kind == "stranger" for a in alerts) and time.monotonic() < deadline:
            alerts = [unpack_alert(r.value()) for r in read_all("alerts")]
        assert any(a.kind == "stranger" and a.camera_id == "door" for a in alerts), alerts
        page = groups_on_page(page_user)
        assert "facestream-alerting" in page, page  # the page may describe every group, and their lag
    finally:
        for worker in workers:
            worker.terminate()
            worker.wait(timeout=60)
    store = AlertStoreConfig(database=f"sqlite:///{tmp_path / 'alerts.db'}", stop_after_idle_s=5.0)
    kept = run_service(alert_store_command(store), env=as_user(cluster, "alert-store"))
    assert "kept 0," not in kept.splitlines()[-1], kept[-2000:]
    said = "".join(log.read_text(errors="replace") for log in logs.values()) + kept
    assert REFUSED not in said and "Traceback" not in said, said[-3000:]


def read_all(topic: str) -> list:
    records, deadline = [], time.monotonic() + 3.0
    for msg in kafka_reading.records(topic, lambda: time.monotonic() > deadline):
        records.append(msg)
    return records


def _operator(database: str) -> str:
    """The API token of a viewer of the dashboard's database."""
    make_users(database, {"operator": "viewer"})
    return api_token(database, "operator")


def groups_on_page(page: Client) -> list[str]:
    """The consumer groups the dashboard shows, once it shows any (it reads them every 2 s)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        status, body = page.call("GET", "/api/state")
        shown = [group["group"] for group in json.loads(body).get("groups", [])] if status == 200 else []
        if shown:
            return shown
        time.sleep(1.0)
    return []


@pytest.mark.parametrize("topic", ["alerts", "detections"])
def test_a_camera_cannot_forge_alerts_or_detections(cluster: dict, sample_dir: Path, topic: str) -> None:
    done = attempt(
        [
            *FACESTREAM,
            "produce",
            "--camera",
            "door",
            "--source",
            str(sample_dir / "obama.jpg"),
            "--frames-topic",
            topic,
        ],
        as_user(cluster, "camera"),
    )
    assert done.returncode != 0
    assert f"{REFUSED} camera write {topic}: Broker: Topic authorization failed" in done.stderr, done.stderr[-3000:]


def test_a_camera_cannot_read_detections(cluster: dict) -> None:
    done = attempt([*FACESTREAM, "events", "--from-beginning", "--duration", "60"], as_user(cluster, "camera"))
    assert done.returncode != 0
    assert f"{REFUSED} camera read detections" in done.stderr, done.stderr[-3000:]


@pytest.mark.parametrize("topic", ["frames", "alerts"])
def test_a_dashboard_cannot_write_but_the_gallery(
    cluster: dict, sample_dir: Path, topic: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    camera = f"mallory-{uuid.uuid4().hex[:6]}"
    done = attempt(
        [
            *FACESTREAM,
            "produce",
            "--camera",
            camera,
            "--source",
            str(sample_dir / "obama.jpg"),
            "--frames-topic",
            topic,
        ],
        as_user(cluster, "dashboard"),
    )
    # The dashboard may write the gallery, so it gets a producer id and the topic refuses it (before it
    # could write any topic, librdkafka's fatal error on the producer id said so: either is a refusal).
    assert done.returncode != 0
    refused = (f"{REFUSED} dashboard write {topic}: Broker: Topic authorization failed", "Cluster authorization failed")
    assert any(said in done.stderr for said in refused), done.stderr[-3000:]
    for name, value in as_user(cluster, "admin").items():
        monkeypatch.setenv(name, value)
    assert not [r for r in read_all(topic) if r.key() == camera.encode()]


def test_an_alerting_worker_that_may_not_follow_the_gallery_stops_and_says_so(
    cluster: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from confluent_kafka.admin import (
        AclBindingFilter,
        AclOperation,
        AclPermissionType,
        ResourcePatternType,
        ResourceType,
    )

    granted = run_service([*FACESTREAM, "kafka", "acls", "--user", "alerting=intruder"], env=as_user(cluster, "admin"))
    assert "User:intruder" in granted
    for name, value in as_user(cluster, "admin").items():
        monkeypatch.setenv(name, value)
    # all of the alerting role's grants but the viewer groups it follows the gallery with
    viewers = AclBindingFilter(
        ResourceType.GROUP,
        kafka_reading.VIEWER_GROUP_PREFIX,
        ResourcePatternType.PREFIXED,
        "User:intruder",
        "*",
        AclOperation.ANY,
        AclPermissionType.ANY,
    )
    client = kafka_clients.admin()  # kept: the futures need their client alive
    for future in client.delete_acls([viewers]).values():
        assert future.result(), "no ACL of the viewer groups was found to take away"
    log = tmp_path / "alerting.log"
    worker = background(alerting_command(AlertingConfig()), as_user(cluster, "intruder"), log)
    assert worker.wait(timeout=90) != 0
    said = log.read_text(errors="replace")
    assert "the gallery cannot be followed, stopping" in said and f"{REFUSED} intruder read faces.gallery" in said
