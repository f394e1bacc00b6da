"""The Helm chart (deploy/helm/facestream), linted and rendered by Helm v4 itself and its manifests
decoded strictly into the Kubernetes API's types (both built by deploy/helm/tools.sh): every service a
Deployment with its probes and only settings its command knows, GPUs requested one a replica, the
detector scaled by KEDA up to the partitions, and Strimzi's topics and users with the ACLs
`facestream kafka acls` gives each role."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from facestream import kafka_settings
from facestream.tools.cli import SUBCOMMANDS, cli

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "deploy" / "helm" / "facestream"
HELM, VALIDATE = Path(sys.executable).parent / "helm", Path(sys.executable).parent / "k8s-validate"
pytestmark = pytest.mark.helm
NEEDED = ["--set", "kafka.bootstrap=kafka:9092", "--set", "database.url=postgresql://fs:secret@postgres/fs"]


def helm(*args: str) -> str:
    assert HELM.exists(), "helm missing: deploy/helm/tools.sh (make test runs it)"
    done = subprocess.run([str(HELM), *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def rendered(*values: str) -> list[dict]:
    return [doc for doc in yaml.safe_load_all(helm("template", "fs", str(CHART), *NEEDED, *values)) if doc]


EVERY_CHOICE = [
    [],
    ["--set", "services.detector.gpu=true", "--set", "services.detector.autoscale.enabled=true"],
    ["--set", "kafka.strimzi.enabled=true", "--set", "kafka.clientPropertiesSecret=fs-kafka"]
    + ["--set", "services.detector.autoscale.enabled=true"],
    [
        "--set",
        "database.existingSecret=fs-db",
        "--set",
        "admin.existingSecret=fs-admin",
        "--set",
        "services.cameras.enabled=true",
    ],
    ["--set", "monitoring.enabled=true"],
]


@pytest.mark.parametrize(
    "choice", EVERY_CHOICE, ids=["defaults", "gpu-keda", "strimzi-tls", "secrets-cameras", "monitoring"]
)
def test_every_rendered_manifest_decodes_strictly_into_its_kubernetes_type(choice: list[str]) -> None:
    assert VALIDATE.exists(), "k8s-validate missing: deploy/helm/tools.sh (make test runs it)"
    manifests = helm("template", "fs", str(CHART), *NEEDED, *choice)
    done = subprocess.run([str(VALIDATE)], input=manifests, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and " 0 invalid" in done.stdout, done.stdout
    unchecked = {
        line.split(": ", 1)[1].split(" ")[0] for line in done.stdout.splitlines() if line.startswith("unchecked")
    }
    assert unchecked <= {
        "Kafka",
        "KafkaNodePool",
        "KafkaTopic",
        "KafkaUser",
        "ScaledObject",
        "TriggerAuthentication",
        "PodMonitor",
        "PrometheusRule",
    }  # CRDs


def of_kind(docs: list[dict], kind: str) -> dict[str, dict]:
    return {doc["metadata"]["name"]: doc for doc in docs if doc["kind"] == kind}


def test_the_chart_lints_and_renders_every_service_with_its_probes() -> None:
    assert "0 chart(s) failed" in helm("lint", "--strict", str(CHART), *NEEDED)
    docs = rendered()
    deployments = of_kind(docs, "Deployment")
    assert set(deployments) == {f"fs-{s}" for s in ("detector", "pose", "alerting", "alert-store", "dashboard")}
    for name, deployment in deployments.items():
        (container,) = deployment["spec"]["template"]["spec"]["containers"]
        assert container["livenessProbe"]["httpGet"]["path"] == "/healthz", name
        assert container["readinessProbe"]["httpGet"]["path"] == "/readyz", name
        assert container["resources"]["requests"], name
    assert set(of_kind(docs, "PodDisruptionBudget")) == {"fs-alerting"}  # the one service with two replicas
    assert of_kind(docs, "Service")["fs-dashboard"]["spec"]["ports"][0]["targetPort"] == "http"
    job = of_kind(docs, "Job")["fs-accounts"]["spec"]["template"]["spec"]["containers"][0]
    assert job["args"][:5] == ["users", "add", "admin", "--role", "admin"] and "--if-missing" in job["args"]


def test_settings_become_only_environment_variables_their_command_knows() -> None:
    docs = rendered(
        "--set", "services.detector.settings.max_fps_per_camera=5", "--set", "services.notifier.enabled=true",
        "--set", "services.cameras.enabled=true",
    )  # fmt: skip
    assert {"fs-notifier", "fs-cameras"} <= set(of_kind(docs, "Deployment"))
    deployments, maps = of_kind(docs, "Deployment"), of_kind(docs, "ConfigMap")
    images = {name: d["spec"]["template"]["spec"]["containers"][0]["image"] for name, d in deployments.items()}
    assert images.pop("fs-cameras") == "facestream-producer:0.1.0"  # the light install's image
    assert set(images.values()) == {"facestream:0.1.0"}
    for name, deployment in deployments.items():
        (container,) = deployment["spec"]["template"]["spec"]["containers"]
        command = cli.get_command(None, container["args"][0])  # type: ignore[arg-type]
        assert command is not None and container["args"][0] in SUBCOMMANDS
        prefix = "FACESTREAM_" + container["args"][0].upper().replace("-", "_")
        known = {f"{prefix}_{p.name.upper()}" for p in command.params if p.name}
        given = set(maps[name]["data"]) | {e["name"] for e in container.get("env", [])}
        assert {k for k in given if k.startswith(prefix)} <= known, name
    assert maps["fs-detector"]["data"]["FACESTREAM_DETECT_MAX_FPS_PER_CAMERA"] == "5"
    assert maps["fs-detector"]["data"]["KAFKA_BOOTSTRAP"] == "kafka:9092"


def test_a_gpu_detector_asks_one_gpu_a_replica_and_keda_scales_it_to_the_partitions() -> None:
    docs = rendered(
        "--set", "services.detector.gpu=true", "--set", "services.detector.autoscale.enabled=true",
        "--set", "kafka.partitions=8",
    )  # fmt: skip
    (container,) = of_kind(docs, "Deployment")["fs-detector"]["spec"]["template"]["spec"]["containers"]
    assert container["resources"]["limits"]["nvidia.com/gpu"] == 1 and container["image"].endswith("-gpu")
    assert container["args"] == ["detect", "--fronts", "4"]
    scaled = of_kind(docs, "ScaledObject")["fs-detector"]["spec"]
    assert scaled["maxReplicaCount"] == 8 and scaled["scaleTargetRef"]["name"] == "fs-detector"
    (trigger,) = scaled["triggers"]
    assert trigger["metadata"]["consumerGroup"] == "facestream-detector" and trigger["metadata"]["topic"] == "frames"


def test_strimzi_gets_the_topics_and_each_role_s_acls_from_the_code() -> None:
    said = CliRunner().invoke(cli, ["kafka", "acls", "--strimzi"])
    assert said.exit_code == 0, said.output
    assert json.loads(said.output) == json.loads((CHART / "files" / "kafka.json").read_text()), (
        "regenerate: facestream kafka acls --strimzi > deploy/helm/facestream/files/kafka.json"
    )
    docs = rendered("--set", "kafka.strimzi.enabled=true", "--set", "kafka.partitions=12")
    topics = {doc["spec"]["topicName"]: doc["spec"] for doc in of_kind(docs, "KafkaTopic").values()}
    assert topics["frames"]["partitions"] == 12 and topics["faces.gallery"]["partitions"] == 1
    assert topics["faces.gallery"]["config"] == {"cleanup.policy": "compact"}
    users = of_kind(docs, "KafkaUser")
    camera = users["fs-camera"]["spec"]["authorization"]["acls"]
    assert {(a["resource"]["name"], tuple(a["operations"])) for a in camera} == {
        ("frames", ("Write", "Describe")),
        ("camera-status", ("Write", "Describe")),
    }
    kafka = of_kind(docs, "Kafka")["fs"]
    assert kafka["metadata"]["annotations"]["strimzi.io/kraft"] == "enabled"
    for name, deployment in of_kind(docs, "Deployment").items():  # each service signs in as its role's user
        (container,) = deployment["spec"]["template"]["spec"]["containers"]
        env = {e["name"]: e for e in container["env"]}
        settings = json.loads(env["FACESTREAM_KAFKA_SETTINGS"]["value"])
        kafka_settings.check(settings, name)
        assert settings["sasl.username"] == "$(KAFKA_USERNAME)" and settings["sasl.password"] == "$(KAFKA_PASSWORD)"
        user = env["KAFKA_USERNAME"]["value"]
        assert user in users and env["KAFKA_PASSWORD"]["valueFrom"]["secretKeyRef"] == {"name": user, "key": "password"}
    assert of_kind(docs, "ConfigMap")["fs-detector"]["data"]["KAFKA_BOOTSTRAP"] == "fs-kafka-bootstrap:9093"


def test_with_strimzi_keda_reads_the_lag_as_the_detector_s_user() -> None:
    docs = rendered("--set", "kafka.strimzi.enabled=true", "--set", "services.detector.autoscale.enabled=true")
    (trigger,) = of_kind(docs, "ScaledObject")["fs-detector"]["spec"]["triggers"]
    assert trigger["metadata"]["sasl"] == "scram_sha512" and trigger["metadata"]["tls"] == "enable"
    auth = of_kind(docs, "TriggerAuthentication")[trigger["authenticationRef"]["name"]]["spec"]
    assert auth["env"] == [{"parameter": "username", "name": "KAFKA_USERNAME", "containerName": "detector"}]
    assert {(r["parameter"], r["name"], r["key"]) for r in auth["secretTargetRef"]} == {
        ("password", "fs-detector", "password"),
        ("ca", "fs-cluster-ca-cert", "ca.crt"),
    }
    (container,) = of_kind(docs, "Deployment")["fs-detector"]["spec"]["template"]["spec"]["containers"]
    assert {e["name"]: e.get("value") for e in container["env"]}["KAFKA_USERNAME"] == "fs-detector"


def test_monitoring_scrapes_each_service_under_the_job_its_rules_name_and_carries_the_rules() -> None:
    docs = rendered("--set", "monitoring.enabled=true", "--set", "services.cameras.enabled=true")
    monitors = of_kind(docs, "PodMonitor")
    deployments = of_kind(docs, "Deployment")
    assert set(monitors) == set(deployments)
    jobs = set()
    for name, monitor in monitors.items():
        (endpoint,) = monitor["spec"]["podMetricsEndpoints"]
        (relabel,) = endpoint["relabelings"]
        jobs.add(relabel["replacement"])
        pod = deployments[name]["spec"]["template"]
        assert monitor["spec"]["selector"]["matchLabels"].items() <= pod["metadata"]["labels"].items()
        (container,) = pod["spec"]["containers"]
        assert endpoint["port"] in {port["name"] for port in container["ports"]}
    rules = yaml.safe_load((ROOT / "deploy" / "prometheus" / "facestream-rules.yml").read_text())
    assert of_kind(docs, "PrometheusRule")["fs-facestream"]["spec"] == rules  # the file promtool tests
    named = {
        m for group in rules["groups"] for rule in group["rules"] for m in re.findall(r'job="([^"]+)"', rule["expr"])
    }
    assert named <= jobs and "facestream-producer" in jobs, (named, jobs)


@pytest.mark.parametrize(
    ("given", "said"),
    [
        (["--set", "database.url=postgresql://fs@postgres/fs"], "kafka.bootstrap"),
        (["--set", "kafka.bootstrap=kafka:9092"], "database.url"),
    ],
)
def test_the_chart_says_what_it_needs(given: list[str], said: str) -> None:
    done = subprocess.run([str(HELM), "template", "fs", str(CHART), *given], capture_output=True, text=True)
    assert done.returncode != 0 and said in done.stderr
