"""The Helm chart's rendered manifests run by ``podman kube play`` on this machine, on a podman network
of their own, beside the parts a Kubernetes cluster would already have (a Kafka broker, PostgreSQL, an
MQTT broker: pods too, ``infrastructure``).

What podman 4.3 (Debian 12's) does differently from Kubernetes, and what stands in for it
(``playable``); everything else in the manifests runs as rendered:
- a Secret in the YAML is stored as the YAML text, which its own ``secretKeyRef`` then fails to read
  (it wants a JSON map of key -> base64): each rendered Secret is created with ``podman secret
  create`` in that form, as the API server would store its ``stringData``;
- a ``containerPort`` without a ``hostPort`` is published on the host's same port (every service's
  9464 at once): the ports are dropped and the probes given the number they named; pods reach each
  other by pod name on the network, the host reaches them at their addresses;
- a Job is not run: its pod template is played as a Pod (what the Job controller would start once);
- a Service has no podman counterpart: left out.
"""

import base64
import json
import subprocess
import time
from pathlib import Path

import yaml

from helpers.compose import ROOT, podman_env

CHART = ROOT / "deploy" / "helm" / "facestream"
PROBES = ("livenessProbe", "readinessProbe", "startupProbe")


def playable(docs: list[dict]) -> tuple[list[dict], dict[str, dict[str, str]]]:
    """The manifests podman 4.3 plays as Kubernetes would run them, and the Secrets (name -> key -> value)."""
    secrets: dict[str, dict[str, str]] = {}
    manifests = []
    for doc in docs:
        kind = doc["kind"]
        if kind == "Secret":
            data = {k: base64.b64decode(v).decode() for k, v in doc.get("data", {}).items()}
            secrets[doc["metadata"]["name"]] = {**data, **doc.get("stringData", {})}
            continue
        if kind == "Service":
            continue
        if kind == "Job":
            template = doc["spec"]["template"]
            doc = {"apiVersion": "v1", "kind": "Pod", "metadata": {**template["metadata"], **doc["metadata"]}}
            doc["spec"] = template["spec"]
        if kind in ("Deployment", "Job"):
            pod_spec = doc["spec"]["template"]["spec"] if kind == "Deployment" else doc["spec"]
            for container in pod_spec["containers"]:
                ports = {p.get("name"): p["containerPort"] for p in container.pop("ports", [])}
                for probe in PROBES:
                    if "httpGet" in container.get(probe, {}):
                        get = container[probe]["httpGet"]
                        get["port"] = ports.get(get["port"], get["port"])
        manifests.append(doc)
    return manifests, secrets


def infrastructure(kafka_port: int, mqtt_port: int, db_password: str) -> list[dict]:
    """Pods of what the chart expects to find running: a Kafka broker (``kafka:9092`` for the pods,
    127.0.0.1:``kafka_port`` for this host), PostgreSQL (``postgres``) and Mosquitto (``mqtt``,
    127.0.0.1:``mqtt_port``), from the images the compose file uses."""
    kafka_env = {
        "KAFKA_NODE_ID": "1",
        "KAFKA_PROCESS_ROLES": "broker,controller",
        "KAFKA_LISTENERS": "INTERNAL://:9092,CONTROLLER://:9093,HOST://:29092",
        "KAFKA_ADVERTISED_LISTENERS": f"INTERNAL://kafka:9092,HOST://127.0.0.1:{kafka_port}",
        "KAFKA_INTER_BROKER_LISTENER_NAME": "INTERNAL",
        "KAFKA_CONTROLLER_LISTENER_NAMES": "CONTROLLER",
        "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP": "CONTROLLER:PLAINTEXT,INTERNAL:PLAINTEXT,HOST:PLAINTEXT",
        "KAFKA_CONTROLLER_QUORUM_VOTERS": "1@localhost:9093",
        "KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR": "1",
        "KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR": "1",
        "KAFKA_TRANSACTION_STATE_LOG_MIN_ISR": "1",
    }
    postgres_env = {"POSTGRES_USER": "facestream", "POSTGRES_PASSWORD": db_password, "POSTGRES_DB": "facestream"}

    def pod(name: str, image: str, env: dict[str, str], port: tuple[int, int] | None = None, **extra) -> dict:
        container = {"name": name, "image": image, "env": [{"name": k, "value": v} for k, v in env.items()], **extra}
        if port:
            container["ports"] = [{"containerPort": port[0], "hostPort": port[1], "hostIP": "127.0.0.1"}]
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {"containers": [container]}}

    return [
        pod("kafka", "docker.io/apache/kafka:4.1.1", kafka_env, (29092, kafka_port)),
        pod("postgres", "docker.io/library/postgres:15", postgres_env),
        pod(
            "mqtt",
            "docker.io/library/eclipse-mosquitto:2",
            {},
            (1883, mqtt_port),
            command=["mosquitto", "-c", "/mosquitto-no-auth.conf"],
        ),
    ]


class Play:
    """Manifests played on the podman network ``network``, and everything of theirs removed by ``down``."""

    def __init__(self, network: str, folder: Path) -> None:
        self.network, self.folder, self.log = network, folder, folder / "kube.log"
        self.files: list[Path] = []
        self.secrets: list[str] = []

    def podman(self, *args: str, check: bool = True, timeout_s: float = 300) -> str:
        done = subprocess.run(["podman", *args], capture_output=True, text=True, env=podman_env(), timeout=timeout_s)
        with open(self.log, "a") as log:
            log.write(f"[{time.strftime('%T')}] $ podman {' '.join(args)}\n{done.stdout}{done.stderr}\n")
        if check and done.returncode != 0:
            raise AssertionError(f"podman {' '.join(args[:3])} ... failed ({done.returncode}):\n{done.stderr[-3000:]}")
        return done.stdout

    def up(self, name: str, docs: list[dict]) -> None:
        """Play ``docs`` (made playable) as one file, its Secrets created first."""
        if not self.files:
            self.podman("network", "create", self.network)
        manifests, secrets = playable(docs)
        for secret, data in secrets.items():
            file = self.folder / f"secret-{secret}.json"
            file.write_text(json.dumps({k: base64.b64encode(v.encode()).decode() for k, v in data.items()}))
            self.podman("secret", "create", secret, str(file))
            self.secrets.append(secret)
        file = self.folder / f"{name}.yaml"
        file.write_text(yaml.safe_dump_all(manifests))
        self.files.append(file)
        self.podman("kube", "play", "--network", self.network, str(file))

    def pods(self) -> list[str]:
        out = self.podman("pod", "ps", "--filter", f"network={self.network}", "--format", "{{.Name}}")
        return sorted(out.split())

    def containers(self, pod_prefix: str = "") -> list[str]:
        """The containers (infra containers aside) of the pods named ``pod_prefix``..., running or not."""
        names = []
        for pod in self.pods():
            if pod.startswith(pod_prefix):
                out = self.podman("ps", "-a", "--filter", f"pod={pod}", "--format", "{{.Names}}")
                names += [name for name in out.split() if not name.endswith("-infra")]
        return sorted(names)

    def address(self, container: str) -> str:
        networks = json.loads(self.podman("inspect", container, "--format", "{{json .NetworkSettings.Networks}}"))
        return networks[self.network]["IPAddress"]

    def logs(self, lines: int = 30) -> str:
        return "\n".join(
            f"--- {c}\n{self.podman('logs', '--tail', str(lines), c, check=False)}" for c in self.containers()
        )

    def down(self) -> None:
        for file in reversed(self.files):
            self.podman("kube", "down", str(file), check=False)
        for secret in self.secrets:
            self.podman("secret", "rm", secret, check=False)
        if self.files:
            self.podman("network", "rm", "-f", self.network, check=False)
