"""The project's docker-compose.yml started for real with podman-compose on this machine (see
``pythonpath`` in pyproject).

Two things podman 4.3 (Debian 12's) cannot do that the file relies on, and what stands in for them:
- healthchecks run on systemd timers, and this machine has no systemd: a thread here runs
  ``podman healthcheck run`` on every container of the stack every few seconds until it is healthy,
  then less often (start_health_ticks says why);
- ``depends_on`` conditions (healthy needs podman 4.6; a finished one-shot breaks podman's
  ``--requires``): services are started one at a time (``up -d --no-deps``) in the order the file's
  ``depends_on`` gives, each once its dependencies meet the file's conditions, checked here with
  ``podman inspect`` and ``podman wait``.
Everything else (images, networks, names, volumes, environment, commands, scaling) is
podman-compose's own reading of the file.
"""

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import yaml

from facestream import kafka_reading
from facestream.schemas import unpack_alert, unpack_detection

ROOT = Path(__file__).resolve().parents[2]
COMPOSE_FILE = ROOT / "docker-compose.yml"
SECURE_FILE = ROOT / "docker-compose.secure.yml"  # an overlay: -f docker-compose.yml -f docker-compose.secure.yml
CONTAINERS_CONF = ROOT / "deploy" / "podman" / "containers.conf"
HEALTH_TICK_S = 3.0
HEALTHY_TICK_S = 30.0
ADMIN_PASSWORD = "compose-admin-password"  # FACESTREAM_ADMIN_PASSWORD: the stack's accounts service makes admin


def podman_env(**extra: str) -> dict[str, str]:
    return {**os.environ, "CONTAINERS_CONF": str(CONTAINERS_CONF), **extra}


def needed_tools() -> list[str]:
    """What this machine lacks to run the stack (empty when all is there)."""
    return [tool for tool in ("podman", "runc", "debootstrap") if not shutil.which(tool)]


def build_images(log: Path) -> None:
    """The registry images the compose file names (deploy/local-images.sh) and the project's own, as
    the compose file builds it: the first test to ask takes minutes, the others find them cached."""
    missing = needed_tools()
    assert not missing, f"{missing} missing: apt-get install podman runc debootstrap (.ci/run does)"
    bin_dir = str(Path(sys.executable).parent)  # the images script asks facestream for Kafka's jars
    subprocess.run(
        ["bash", str(ROOT / "deploy" / "local-images.sh")],
        check=True,
        timeout=1200,
        env=podman_env(PATH=f"{bin_dir}:{os.environ['PATH']}"),
    )
    Stack("fsimages", (), {}, log).compose("build", timeout_s=1800)


def merged(base: dict, over: dict) -> dict:
    """``over`` laid on ``base`` as compose merges files: maps key by key, anything else replaced."""
    out = dict(base)
    for key, value in over.items():
        out[key] = merged(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


class Stack:
    """One project of the compose file (and overlays: ``files``), under its own name, with its own host
    ports; ``profiles`` and an ``env_file`` of variables, as ``docker compose --env-file F --profile A
    --profile B`` takes them."""

    def __init__(
        self,
        project: str,
        profiles: tuple[str, ...],
        env: dict[str, str],
        log: Path,
        env_file: Path | None = None,
        files: tuple[Path, ...] = (COMPOSE_FILE,),
    ) -> None:
        self.project, self.profiles, self.log, self.env_file, self.files = project, profiles, log, env_file, files
        self.env = podman_env(**env)
        self.spec: dict = {}
        for file in files:
            self.spec = merged(self.spec, yaml.safe_load(file.read_text()))
        self._ticking = threading.Event()

    # -- podman-compose and podman ------------------------------------------------------------

    def compose(self, *args: str, timeout_s: float = 900) -> str:
        cmd = [
            sys.executable,
            "-m",
            "podman_compose",
            *[arg for file in self.files for arg in ("-f", str(file))],
            "-p",
            self.project,
            *(["--env-file", str(self.env_file)] if self.env_file else []),
            *[arg for profile in self.profiles for arg in ("--profile", profile)],
            *args,
        ]
        return self._run(cmd, timeout_s)

    def podman(self, *args: str, timeout_s: float = 120, check: bool = True) -> str:
        return self._run(["podman", *args], timeout_s, check)

    def _run(self, cmd: list[str], timeout_s: float, check: bool = True) -> str:
        started = time.strftime("%T")
        done = subprocess.run(cmd, capture_output=True, text=True, env=self.env, timeout=timeout_s, cwd=ROOT)
        with open(self.log, "a") as log:  # when each began and ended: where a slow run spent its time
            log.write(f"[{started}-{time.strftime('%T')}] $ {' '.join(cmd)}\n{done.stdout}{done.stderr}\n")
        if check and done.returncode != 0:
            raise AssertionError(f"{' '.join(cmd[:6])} ... failed ({done.returncode}):\n{done.stderr[-3000:]}")
        return done.stdout

    def containers(self, service: str | None = None, running: bool = True) -> list[str]:
        label = [f"--filter=label=io.podman.compose.project={self.project}"]
        if service:
            label.append(f"--filter=label=io.podman.compose.service={service}")
        out = self.podman("ps", *([] if running else ["-a"]), *label, "--format", "{{.Names}}", check=False)
        return sorted(out.split())

    def health(self, container: str) -> str:
        out = self.podman("inspect", container, "--format", "{{json .State.Health}}", check=False).strip()
        try:
            return json.loads(out).get("Status", "") if out and out != "null" else ""
        except json.JSONDecodeError:
            return ""

    # -- starting in the file's order ---------------------------------------------------------

    def services(self, only: tuple[str, ...] = ()) -> list[str]:
        """The services of the profiles (or ``only`` those and what they need), dependencies first."""
        wanted = self.wanted()
        ordered: list[str] = []

        def visit(name: str) -> None:
            if name in ordered:
                return
            for dep in self.spec["services"][name].get("depends_on", {}):
                if dep in wanted:  # one of another profile is "required: false"
                    visit(dep)
            ordered.append(name)

        for name in sorted(only or wanted):
            visit(name)
        return ordered

    @contextmanager
    def running(self, *only: str) -> Iterator[None]:
        """The stack (or ``only`` those services and what they need) up for the block, down however it
        ends; every started service's log printed if it fails."""
        try:
            self.up(only)
            yield
        except BaseException:
            for service in self.services(only):
                print(f"--- {service}\n{self.logs(service)}")
            raise
        finally:
            self.down()

    def wanted(self) -> set[str]:
        """The services without a profile and those of the profiles asked for."""
        return {
            name
            for name, spec in self.spec["services"].items()
            if not spec.get("profiles") or set(self.profiles) & set(spec["profiles"])
        }

    def up(self, only: tuple[str, ...] = (), timeout_s: float = 300) -> None:
        """Start every service of the profiles (or ``only`` those and what they need), each once its
        dependencies meet their conditions; a cluster's nodes all at once (a node is healthy only once a
        majority of the controllers runs)."""
        self.start_health_ticks()
        wanted = self.wanted()
        for service in self.services(only):
            for dep, rule in self.spec["services"][service].get("depends_on", {}).items():
                if dep in wanted:
                    self.wait_for(dep, rule.get("condition", "service_started"), timeout_s)
            self.compose("up", "-d", "--no-deps", service)

    def wait_for(self, service: str, condition: str, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while True:
            names = self.containers(service, running=False)
            if condition == "service_completed_successfully" and names:
                codes = [self.podman("wait", name, timeout_s=timeout_s).strip() for name in names]
                assert codes == ["0"] * len(names), f"{service} exited with {codes}: {self.logs(service)}"
                return
            if condition == "service_healthy" and names and all(self.health(n) == "healthy" for n in names):
                return
            if condition == "service_started" and self.containers(service):
                return
            assert time.monotonic() < deadline, (
                f"{service} not {condition} within {timeout_s:.0f} s: {self.logs(service)}"
            )
            time.sleep(1.0)

    def wait_healthy(self, service: str, timeout_s: float, count: int = 1) -> list[str]:
        deadline = time.monotonic() + timeout_s
        while True:
            names = self.containers(service)
            if len(names) >= count and all(self.health(n) == "healthy" for n in names):
                return names
            assert time.monotonic() < deadline, (
                f"{service}: {[(n, self.health(n)) for n in names]} after {timeout_s:.0f} s: {self.logs(service)}"
            )
            time.sleep(1.0)

    def logs(self, service: str, lines: int = 40) -> str:
        return "\n".join(
            self.podman("logs", "--tail", str(lines), n, check=False) for n in self.containers(service, False)
        )

    # -- what systemd timers would do ---------------------------------------------------------

    def start_health_ticks(self) -> None:
        """Every few seconds a check of each container not yet healthy; a healthy one's every
        HEALTHY_TICK_S (the file's 5 s would start a JVM per Kafka node every 5 s, a large share of two
        cores, and no test waits for a container to turn unhealthy)."""
        healthy_at: dict[str, float] = {}

        def tick() -> None:
            while not self._ticking.wait(HEALTH_TICK_S):
                for name in self.containers():
                    if time.monotonic() - healthy_at.get(name, -HEALTHY_TICK_S) < HEALTHY_TICK_S:
                        continue
                    done = subprocess.run(["podman", "healthcheck", "run", name], capture_output=True, env=self.env)
                    if done.returncode == 0:
                        healthy_at[name] = time.monotonic()
                    else:
                        healthy_at.pop(name, None)

        threading.Thread(target=tick, name="health-ticks", daemon=True).start()

    def down(self) -> None:
        """Everything of the project gone, replicas a test scaled up included (podman-compose's down
        removes only the file's own)."""
        self._ticking.set()
        left = self.containers(running=False)
        if left:  # a test's stack owes nobody a clean stop: all removed at once (compose stops one by one)
            self.podman("rm", "-f", "-t", "0", *left, check=False)
        self.compose("down", "-v", "-t", "0", timeout_s=300)  # the network and volumes they held


def values(bootstrap: str, topic: str) -> list[bytes]:
    return [r.value() for r in kafka_reading.read_to_end(topic, bootstrap, timeout_s=60)]


def wait_for_records(bootstrap: str, topic: str, done, kind: bool = False, timeout_s: float = 180) -> set[str]:
    """Camera ids (or alert kinds) seen on ``topic`` once ``done(seen)`` holds."""
    deadline, seen = time.monotonic() + timeout_s, set()
    while not done(seen):
        assert time.monotonic() < deadline, f"{topic}: only {sorted(seen)} after {timeout_s:.0f} s"
        time.sleep(3)
        for value in values(bootstrap, topic):
            seen.add(unpack_alert(value).kind if kind else unpack_detection(value).camera_id)
    return seen
