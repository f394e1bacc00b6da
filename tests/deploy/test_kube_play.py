"""The Helm chart's pods, run: Helm v4 renders the chart for an external Kafka and database, and
``podman kube play`` runs the rendered Deployments, ConfigMaps, Secrets and the accounts Job's pod with
the project's images (helpers/kube.py says what podman 4.3 needs done differently). Frames go in from
the chart's own cameras, events, alerts and MQTT state come out, the page answers its admin, and then
everything is torn down."""

import json
import subprocess
import sys
import urllib.request
import uuid
from pathlib import Path

import pytest
import yaml
from helpers.accounts import Client
from helpers.compose import build_images, wait_for_records
from helpers.http import free_port
from helpers.kube import CHART, Play, infrastructure
from helpers.producer import wait_until
from helpers.receiver import retained

from facestream import kafka_clients, kafka_topics

pytestmark = pytest.mark.helm
HELM = Path(sys.executable).parent / "helm"
SERVICES = ("cameras", "detector", "pose", "alerting", "alert-store", "notifier", "dashboard")
ADMIN_PASSWORD = "kube-admin-password"


def chart_values(db_password: str) -> dict:
    """What a user would set for a cluster with Kafka at ``kafka:9092`` and PostgreSQL at ``postgres``:
    a camera of the sample photos, its stranger rule, MQTT state for Home Assistant."""
    return {
        "image": {"repository": "localhost/facestream", "tag": "0.1.0", "pullPolicy": "Never"},
        "producerImage": {"repository": "localhost/facestream-producer", "tag": "0.1.0"},
        "kafka": {"bootstrap": "kafka:9092", "partitions": 2, "replicationFactor": 1},
        "database": {"url": f"postgresql://facestream:{db_password}@postgres/facestream"},
        "admin": {"existingSecret": "fs-admin"},
        "services": {
            "cameras": {
                "enabled": True,
                "settings": {"cameras": "portraits", "sources": "/var/lib/facestream/samples/portraits", "fps": 2},
            },
            "alerting": {"replicas": 1, "settings": {"cameras": json.dumps({"portraits": {"rules": "stranger"}})}},
            "notifier": {
                "enabled": True,
                "settings": {
                    "frames_topic": "frames",
                    "targets": json.dumps({"home": {"url": "mqtt://mqtt/facestream", "mqtt_state": True}}),
                },
            },
        },
    }


def rendered(values: dict, folder: Path) -> list[dict]:
    assert HELM.exists(), "helm missing: deploy/helm/tools.sh (make test runs it)"
    file = folder / "values.yaml"
    file.write_text(yaml.safe_dump(values))
    done = subprocess.run(
        [str(HELM), "template", "fs", str(CHART), "-f", str(file)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return [doc for doc in yaml.safe_load_all(done.stdout) if doc]


@pytest.mark.timeout(1800)
def test_the_chart_s_pods_run_under_podman_and_answer_end_to_end(tmp_path: Path) -> None:
    build_images(tmp_path / "images.log")
    kafka_port, mqtt_port, db_password = free_port(), free_port(), uuid.uuid4().hex
    bootstrap = f"127.0.0.1:{kafka_port}"
    play = Play(f"fskube{uuid.uuid4().hex[:6]}", tmp_path)
    admin_secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "fs-admin"}}
    docs = rendered(chart_values(db_password), tmp_path)
    kinds = sorted({doc["kind"] for doc in docs})
    assert kinds == ["ConfigMap", "Deployment", "Job", "Secret", "Service"], kinds
    try:
        play.up("infrastructure", infrastructure(kafka_port, mqtt_port, db_password))
        # The topics, as an operator (or Strimzi's KafkaTopics) makes them before the services start.
        wait_until(lambda: _kafka_answers(bootstrap), 120, "Kafka", play.logs)
        topics = ("frames", "frames.corridor", "detections", "poses", "alerts", "camera-status")
        kafka_topics.ensure_topics({**dict.fromkeys(topics, 2), "frames.dlq": 1}, bootstrap)
        kafka_topics.ensure_topics(
            {"faces.gallery": 1}, bootstrap, configs={"faces.gallery": {"cleanup.policy": "compact"}}
        )
        play.up("chart", [{**admin_secret, "stringData": {"password": ADMIN_PASSWORD}}, *docs])

        started = {service: play.containers(f"fs-{service}-") for service in SERVICES}
        assert all(len(names) == 1 for names in started.values()), started
        addresses = {service: play.address(names[0]) for service, names in started.items()}
        for service, address in addresses.items():
            wait_until(lambda a=address: _ready(a), 300, f"{service}'s /readyz", play.logs)

        # Frames in from the chart's camera; events, a stranger alert, and its MQTT state out.
        assert "portraits" in wait_for_records(bootstrap, "detections", lambda found: "portraits" in found)
        assert "stranger" in wait_for_records(bootstrap, "alerts", lambda found: "stranger" in found, kind=True)
        wait_until(lambda: "facestream/portraits/stranger" in retained(mqtt_port), 120, "the notifier's MQTT state")

        # The page answers the admin the accounts Job made from the Secret, and shows the camera.
        page = Client(9464, host=addresses["dashboard"])
        assert page.call("GET", "/api/state")[0] == 401
        page.sign_in("admin", ADMIN_PASSWORD)
        status, body = page.call("GET", "/api/state")
        assert status == 200 and "portraits" in {c["camera_id"] for c in json.loads(body)["cameras"]}
        status, body = page.call("GET", "/api/alerts?limit=50")
        assert status == 200 and "stranger" in {a["kind"] for a in json.loads(body)["alerts"]}
    except BaseException:
        print(play.logs())
        raise
    finally:
        play.down()
    assert play.pods() == [] and play.containers() == [], "kube down left pods behind"


def _kafka_answers(bootstrap: str) -> bool:
    try:
        return bool(kafka_clients.admin(bootstrap, quiet=True).list_topics(timeout=3).brokers)
    except Exception:  # not yet listening
        return False


def _ready(address: str) -> bool:
    try:
        with urllib.request.urlopen(f"http://{address}:9464/readyz", timeout=3) as response:
            return response.status == 200
    except OSError:
        return False
