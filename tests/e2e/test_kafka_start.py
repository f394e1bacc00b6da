"""`facestream kafka start` tells the truth: a broker that cannot have its ports says so and stops,
naming the port and who holds it, instead of taking another copy's broker for its own."""

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.secure import free_ports

from facestream import paths
from facestream.broker.local import LocalBroker


def kafka_start(home: Path, port: int) -> subprocess.CompletedProcess:
    """`facestream kafka start` as another copy of the project would run it (its own FACESTREAM_HOME)."""
    env = {**os.environ, "FACESTREAM_HOME": str(home), "FACESTREAM_KAFKA_PORT": str(port)}
    env.pop("KAFKA_BOOTSTRAP", None)
    command = [sys.executable, "-m", "facestream", "kafka", "start"]
    return subprocess.run(command, capture_output=True, text=True, timeout=180, env=env)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A second copy's data folder, sharing this one's Kafka jars (no second download)."""
    (tmp_path / "kafka").mkdir()
    (tmp_path / "kafka" / "lib").symlink_to(paths.kafka_dir() / "lib")
    return tmp_path


def test_a_second_broker_on_a_running_brokers_ports_fails_naming_the_holder(
    bootstrap: str, home: Path, tmp_path_factory
) -> None:
    port, _ = free_ports()
    first = LocalBroker(root=tmp_path_factory.mktemp("first") / "kafka", port=port, lib=paths.kafka_dir() / "lib")
    first.start()
    try:
        done = kafka_start(home, port)
        assert done.returncode != 0, done.stdout + done.stderr
        assert f"cannot start Kafka on 127.0.0.1:{port}: the port is taken by pid {first.status().pid}" in done.stderr
        assert "ready" not in done.stderr
        assert first.status().running  # the other copy's broker is left alone
    finally:
        first.stop()


def test_a_taken_controller_port_fails_before_anything_starts(bootstrap: str, home: Path) -> None:
    port, _ = free_ports()
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", port + 1))
        holder.listen()
        done = kafka_start(home, port)
    assert done.returncode != 0
    assert f"cannot start Kafka on 127.0.0.1:{port + 1}: the port is taken by pid {os.getpid()}" in done.stderr
    assert not (home / "kafka" / "broker.pid").exists()


def test_the_broker_runs_kip_890_s_transaction_protocol(bootstrap: str) -> None:
    """`facestream kafka start` formats its storage with transaction.version=2, the server-side
    defence against the races Jepsen found in transactions; `facestream kafka features` reads it
    back from the running broker, as Kafka's kafka-features.sh does (docs/guarantees.md)."""
    done = subprocess.run(
        [sys.executable, "-m", "facestream", "kafka", "features"], capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0, done.stderr[-3000:]
    levels = dict(line.split("=") for line in done.stdout.split())
    assert levels["transaction.version"] == "2", done.stdout
    assert levels["metadata.version"].startswith("4."), done.stdout  # Kafka 4's release, e.g. 4.1-IV1
