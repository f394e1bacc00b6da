"""A cluster that wants TLS and SCRAM-SHA-512: the project's broker with a secure listener (its
certificate and user made here), and the services reaching it with settings from a properties file;
a wrong password and plaintext to the TLS port fail at once, saying why; no secret reaches a log."""

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from helpers.kafka import detector_args, read_topic, run_service
from helpers.secure import certificate, free_ports

from facestream import kafka_clients, paths
from facestream.broker.local import LocalBroker, SecureListener
from facestream.schemas import unpack_detection

PASSWORD = "s3cret-" + uuid.uuid4().hex[:8]


@pytest.fixture(scope="module")
def secure_broker(bootstrap: str, tmp_path_factory) -> dict:
    folder = tmp_path_factory.mktemp("secure-kafka")
    keystore, ca = certificate(folder)
    port, secure_port = free_ports()
    listener = SecureListener(secure_port, keystore, "keypass", {"alice": PASSWORD})
    broker = LocalBroker(root=folder / "kafka", port=port, secure=listener, lib=paths.kafka_dir() / "lib")
    broker.start()
    try:
        yield {"bootstrap": f"127.0.0.1:{secure_port}", "ca": ca, "folder": folder}
    finally:
        broker.stop()


def properties(broker: dict, password: str) -> Path:
    path = broker["folder"] / f"client-{uuid.uuid4().hex[:6]}.properties"
    path.write_text(
        "# as Kafka's own client.properties\n"
        "security.protocol=SASL_SSL\n"
        "sasl.mechanism=SCRAM-SHA-512\n"
        "sasl.username=alice\n"
        f"sasl.password={password}\n"
        f"ssl.ca.location={broker['ca']}\n"
    )
    return path


def produce_once(broker: dict, env: dict, topic: str, sample_dir: Path) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "facestream", "produce", "--fps", "0", "--start-seq", "0", "--frames-topic", topic]
    cmd += ["--camera", "door", "--source", str(sample_dir / "portraits")]
    return subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "KAFKA_BOOTSTRAP": broker["bootstrap"], **env},
    )


def test_frames_become_events_over_tls_and_scram(secure_broker: dict, sample_dir: Path, monkeypatch) -> None:
    tag = uuid.uuid4().hex[:8]
    topics = {"frames": f"s-{tag}.frames", "detections": f"s-{tag}.detections", "dlq": f"s-{tag}.dlq"}
    topics["group"] = f"s-{tag}.detector"
    settings = {"FACESTREAM_KAFKA_CONFIG": str(properties(secure_broker, PASSWORD))}
    for name, value in {"KAFKA_BOOTSTRAP": secure_broker["bootstrap"], **settings}.items():
        monkeypatch.setenv(name, value)  # this process's readers too
    produced = produce_once(secure_broker, settings, topics["frames"], sample_dir)
    assert produced.returncode == 0, produced.stderr[-3000:]
    log = run_service([sys.executable, "-m", "facestream", "detect", *detector_args(topics)])
    events = [
        unpack_detection(r.value()) for r in read_topic(kafka_clients.bootstrap_servers(), topics["detections"], 4)
    ]
    assert sorted(e.frame_seq for e in events) == [0, 1, 2, 3]
    assert PASSWORD not in produced.stdout + produced.stderr + log


def test_a_wrong_password_fails_at_once_and_says_so(secure_broker: dict, sample_dir: Path) -> None:
    started = time.monotonic()
    done = produce_once(
        secure_broker, {"FACESTREAM_KAFKA_CONFIG": str(properties(secure_broker, "wrong"))}, "x", sample_dir
    )
    assert done.returncode != 0
    assert "refused the credentials" in done.stderr and "Authentication failed" in done.stderr, done.stderr[-2000:]
    assert time.monotonic() - started < 20
    assert "wrong" not in done.stderr.replace("wrong password", "")


def test_plaintext_to_the_tls_port_fails_clearly(secure_broker: dict, sample_dir: Path) -> None:
    done = produce_once(secure_broker, {}, "x", sample_dir)
    assert done.returncode != 0
    assert f"no Kafka broker answers at {secure_broker['bootstrap']}" in done.stderr, done.stderr[-2000:]
    assert "security.protocol" in done.stderr or "SSL" in done.stderr, done.stderr[-2000:]
