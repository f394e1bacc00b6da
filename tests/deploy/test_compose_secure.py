"""docker-compose.secure.yml laid over the compose file, started for real (as test_compose.py starts the
plain stack): TLS and a password per role on every Kafka connection, each role's ACLs written by
``facestream kafka acls``, no plaintext listener. Read from the host with the roles' own settings,
taken from their volumes."""

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from confluent_kafka import KafkaException
from helpers.accounts import Client
from helpers.compose import ADMIN_PASSWORD, COMPOSE_FILE, SECURE_FILE, Stack, build_images, wait_for_records
from helpers.http import free_port

from facestream import kafka_clients

FACESTREAM = [sys.executable, "-m", "facestream"]
REFUSED = "Kafka's ACLs do not let user"


def test_the_secure_stack_runs_each_role_on_its_own_password_and_topics(
    tmp_path: Path, sample_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    build_images(tmp_path / "images.log")  # cached when another test built them
    port, page_port = free_port(), free_port()
    stack = Stack(
        f"fssecure{uuid.uuid4().hex[:6]}",
        ("cpu",),
        {
            "FACESTREAM_COMPOSE_KAFKA_PORT": str(port),
            "FACESTREAM_DASHBOARD_PORT": str(page_port),
            "FACESTREAM_MQTT_PORT": str(free_port()),
            "FACESTREAM_DB_PASSWORD": uuid.uuid4().hex,
            "FACESTREAM_ADMIN_PASSWORD": ADMIN_PASSWORD,
        },
        tmp_path / "compose.log",
        files=(COMPOSE_FILE, SECURE_FILE),
    )
    bootstrap = f"127.0.0.1:{port}"
    with stack.running():
        for service in ("detector", "pose", "alerting", "alert-store", "notifier", "dashboard"):
            stack.wait_healthy(service, timeout_s=300)
        access = {role: role_settings(stack, role, tmp_path) for role in ("camera", "dashboard")}
        page = Client(page_port)  # the page wants an account: the one the accounts service made
        assert page.call("GET", "/api/state")[0] == 401
        assert page.sign_in("admin", ADMIN_PASSWORD).call("GET", "/api/state")[0] == 200

        # The pipeline runs, every service as its own role: alerts, read as the dashboard.
        monkeypatch.setenv("KAFKA_BOOTSTRAP", bootstrap)
        monkeypatch.setenv("FACESTREAM_KAFKA_CONFIG", str(access["dashboard"]))
        assert {"stranger", "fall"} <= wait_for_records(
            bootstrap, "alerts", lambda found: {"stranger", "fall"} <= found, kind=True
        )
        said = "".join(stack.logs(service, lines=400) for service in stack.services())
        assert REFUSED not in said, said[-3000:]

        # A camera can forge no alerts and read no detections; a dashboard writes no frames.
        camera = {"KAFKA_BOOTSTRAP": bootstrap, "FACESTREAM_KAFKA_CONFIG": str(access["camera"])}
        photo = str(sample_dir / "obama.jpg")
        forged = attempt(
            [*FACESTREAM, "produce", "--camera", "x", "--source", photo, "--frames-topic", "alerts"], camera
        )
        assert f"{REFUSED} camera write alerts" in forged.stderr, forged.stderr[-3000:]
        peeked = attempt([*FACESTREAM, "events", "--from-beginning", "--duration", "60"], camera)
        assert f"{REFUSED} camera read detections" in peeked.stderr, peeked.stderr[-3000:]
        page = {**camera, "FACESTREAM_KAFKA_CONFIG": str(access["dashboard"])}
        written = attempt([*FACESTREAM, "produce", "--camera", "x", "--source", photo], page)
        # The dashboard may write the gallery only: the frames topic refuses it (ours), or librdkafka's
        # FATAL line on the producer id says so.
        refused = (f"{REFUSED} dashboard write frames", "Cluster authorization failed")
        assert written.returncode != 0 and any(said in written.stderr for said in refused), written.stderr[-3000:]

        # Without credentials the broker answers nothing: no listener is plaintext.
        monkeypatch.delenv("FACESTREAM_KAFKA_CONFIG")
        with pytest.raises(KafkaException):
            kafka_clients.admin(bootstrap).list_topics(timeout=10)


def role_settings(stack: Stack, role: str, folder: Path) -> Path:
    """A role's client settings as its service gets them, from its volume, its CA file moved here."""
    mounted = Path(
        stack.podman("volume", "inspect", f"{stack.project}_credentials-{role}", "--format", "{{.Mountpoint}}").strip()
    )
    ca = folder / f"{role}-ca.pem"
    ca.write_bytes((mounted / "ca.pem").read_bytes())
    text = (mounted / "client.properties").read_text().replace("/etc/facestream/kafka/ca.pem", str(ca))
    settings = folder / f"{role}.properties"
    settings.write_text(text)
    return settings


def attempt(cmd: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180, env={**os.environ, **env})
