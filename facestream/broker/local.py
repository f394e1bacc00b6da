"""Run Apache Kafka from Maven Central's jars with the machine's Java: no download site, no Docker.

The jars come from ``pom.xml`` beside this file (``mvn dependency:copy-dependencies``, cached in
``~/.m2``); storage is formatted once, the way Kafka's own ``bin/kafka-storage.sh`` does; the broker
runs detached, its pid and log in ``$FACESTREAM_HOME/kafka``. One node alone is its own controller;
as a node of a ``LocalCluster`` it names the cluster's controller quorum and replicates what it holds.
"""

import base64
import hashlib
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from facestream import kafka_clients, paths
from facestream.broker import ports
from facestream.errors import BrokerError

log = logging.getLogger(__name__)

MIN_JAVA = 17
TRANSACTION_VERSION = 2  # KIP-890's protocol; docs/guarantees.md says which clients take part in it
DEFAULT_HEAP = "-Xms256m -Xmx1g"
SERVER_PROPERTIES = """\
# Written by `facestream kafka start`; edits are overwritten at the next start.
process.roles=broker,controller
node.id={node_id}
{quorum}
listeners=PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}
advertised.listeners=PLAINTEXT://127.0.0.1:{port}
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
log.dirs={data_dir}
num.partitions=4
auto.create.topics.enable=true
message.max.bytes={max_message_bytes}
replica.fetch.max.bytes={max_message_bytes}
log.retention.hours=24
# A cluster's node that dies (a crash, a failed disk) is fenced, and its partitions led by others, once
# its heartbeats to the controllers stop for this long (Kafka's default: 9 s); nodes here are local.
# Short enough that a group coordinator on a dead node moves within the detector's 6 s group session
# (its members then keep their partitions instead of rejoining), after a controller election too.
broker.session.timeout.ms=3000
broker.heartbeat.interval.ms=500
# A dead active controller is noticed after 1 s without its answer (Kafka's default: 2 s) and a split
# vote retried within 0.3 s (1 s): nodes here are local, an answer takes milliseconds.
controller.quorum.fetch.timeout.ms=1000
controller.quorum.election.timeout.ms=500
controller.quorum.election.backoff.max.ms=300
# A cluster keeps three copies of every partition and takes a write once two have it.
default.replication.factor={replication}
min.insync.replicas={min_isr}
offsets.topic.replication.factor={replication}
transaction.state.log.replication.factor={replication}
transaction.state.log.min.isr={min_isr}
share.coordinator.state.topic.replication.factor={replication}
share.coordinator.state.topic.min.isr={min_isr}
group.initial.rebalance.delay.ms=0
# Tests use sessions shorter than Kafka's default minimum (6 s) to make a batch outlast a short
# max.poll.interval.ms, which librdkafka requires to be no shorter than the session.
group.min.session.timeout.ms=1000
# A dead producer's open transaction is aborted once transaction.timeout.ms has passed, at the next of
# these checks (Kafka's default: every 10 s); until then read_committed readers and the next owner of
# its partitions wait.
transaction.abort.timed.out.transaction.cleanup.interval.ms=1000
"""
# Added for a SecureListener: TLS with SCRAM-SHA-512 users on a port of its own. The plaintext
# listener stays on 127.0.0.1 for the broker's own traffic.
SECURE_PROPERTIES = """\
listeners=PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port},SECURE://127.0.0.1:{secure_port}
advertised.listeners=PLAINTEXT://127.0.0.1:{port},SECURE://127.0.0.1:{secure_port}
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SECURE:SASL_SSL
sasl.enabled.mechanisms=SCRAM-SHA-512
listener.name.secure.sasl.enabled.mechanisms=SCRAM-SHA-512
listener.name.secure.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
ssl.keystore.type=PKCS12
ssl.keystore.location={keystore}
ssl.keystore.password={keystore_password}
ssl.key.password={keystore_password}
"""
# Added when a SecureListener names admins: Kafka's own authorizer, which refuses whatever no ACL allows.
# The node's own loopback listeners (plaintext, principal ANONYMOUS) carry its replication and
# controller traffic, so that principal is a super user beside the admins.
AUTHORIZER_PROPERTIES = """\
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
allow.everyone.if.no.acl.found=false
super.users={super_users}
"""


@dataclass(frozen=True)
class SecureListener:
    """A SASL_SSL listener: TLS from a PKCS12 keystore, and SCRAM-SHA-512 users (name -> password)
    created when the storage is formatted; with ``admins``, Kafka's ACLs (``facestream kafka acls``)."""

    port: int
    keystore: Path
    keystore_password: str
    users: dict[str, str]
    admins: tuple[str, ...] | None = None  # users allowed everything; set: ACLs decide for the others


@dataclass(frozen=True)
class Quorum:
    """The controllers of a cluster (node id -> controller port, on 127.0.0.1) and its id, which every
    node's storage is formatted with."""

    voters: dict[int, int]
    cluster_id: str

    @property
    def replication(self) -> int:
        return min(3, len(self.voters))


@dataclass(frozen=True)
class BrokerStatus:
    running: bool
    pid: int | None
    bootstrap: str
    detail: str


class LocalBroker:
    """The broker in ``$FACESTREAM_HOME/kafka``; every method is safe to call twice."""

    def __init__(
        self,
        root: Path | None = None,
        port: int | None = None,
        secure: SecureListener | None = None,
        lib: Path | None = None,
        node_id: int = 1,
        quorum: Quorum | None = None,
    ) -> None:
        self.root = root or paths.kafka_dir()
        self.port = port or kafka_clients.local_port()
        self.controller_port = self.port + 1
        self.node_id, self.quorum = node_id, quorum
        self.secure = secure
        self.lib = lib or self.root / "lib"  # another broker's, to share its jars
        self.data = self.root / "data"
        self.config = self.root / "server.properties"
        self.pid_file = self.root / "broker.pid"
        self.log_file = self.root / "broker.log"

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    # -- public -----------------------------------------------------------------------------

    def start(self, timeout_s: float = 90.0, wait: bool = True) -> BrokerStatus:
        """Start the broker and wait until it answers (``wait``; a cluster's node cannot answer before a
        majority of its controllers runs, so the cluster waits for them all instead)."""
        current = self.status()
        if current.running:
            return current
        java = find_java()
        self.install_jars()
        self._check_ports_free()
        self.root.mkdir(parents=True, exist_ok=True)
        self.config.write_text(self._properties())
        self._format_storage(java)
        heap = os.environ.get("FACESTREAM_KAFKA_HEAP", DEFAULT_HEAP).split()
        cmd = [
            java,
            *heap,
            f"-Dlog4j2.configurationFile={self.log4j_config()}",
            "-cp",
            f"{self.lib}/*",
            "kafka.Kafka",
            str(self.config),
        ]
        log_handle = open(self.log_file, "ab")
        proc = subprocess.Popen(
            cmd, stdout=log_handle, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
        )
        self.pid_file.write_text(str(proc.pid))
        progress(f"starting Kafka on {self.bootstrap} (pid {proc.pid}, log {self.log_file}) ")
        if not wait:
            progress("\n")
            return BrokerStatus(False, proc.pid, self.bootstrap, "starting")
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise BrokerError(f"Kafka exited with code {proc.returncode} while starting:\n{self.log_tail()}")
            if self._answers():
                progress(" ready\n")
                return self.status()
            progress(".")
            time.sleep(1.0)
        self.stop()
        raise BrokerError(f"Kafka did not answer within {timeout_s:.0f} s:\n{self.log_tail()}")

    def stop(self, timeout_s: float = 30.0) -> bool:
        """Stop the broker; return whether one was running."""
        pid = self._pid()
        if pid is None:
            return False
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(0.2)
        if _alive(pid):
            log.warning("Kafka (pid %d) ignored SIGTERM for %.0f s: killing it", pid, timeout_s)
            os.kill(pid, signal.SIGKILL)
        self.pid_file.unlink(missing_ok=True)
        return True

    def status(self) -> BrokerStatus:
        pid = self._pid()
        if pid is None:
            return BrokerStatus(False, None, self.bootstrap, "not running")
        brokers = self._answers(timeout_s=3.0)
        if not brokers:
            return BrokerStatus(False, pid, self.bootstrap, f"process {pid} is up but does not answer yet")
        return BrokerStatus(True, pid, self.bootstrap, f"running, {brokers} broker(s) answer")

    def cluster_id(self) -> str | None:
        """The cluster id this node's storage was formatted with (None before the first start)."""
        try:
            text = (self.data / "meta.properties").read_text()
        except FileNotFoundError:
            return None
        found = re.search(r"^cluster\.id=(\S+)", text, re.M)
        return found.group(1) if found else None

    def _answers(self, timeout_s: float = 2.0) -> int:
        """How many brokers answer at this node's address, 0 when none does; BrokerError when the one
        that answers is of another cluster (another copy's broker on these ports, not this one)."""
        try:
            metadata = kafka_clients.admin(self.bootstrap, quiet=True).list_topics(timeout=timeout_s)
        except Exception:  # KafkaException: nothing answers yet
            return 0
        ours = self.cluster_id()
        if ours is not None and metadata.cluster_id != ours:
            raise BrokerError(
                f"the broker answering at {self.bootstrap} is of cluster {metadata.cluster_id}, not this one "
                f"({ours}, in {self.data}): another Kafka holds the port ({ports.holder(self.port)}). "
                f"Stop it, or give this one other ports (FACESTREAM_KAFKA_PORT)."
            )
        return len(metadata.brokers)

    def _check_ports_free(self) -> None:
        """BrokerError naming the port and its holder when one of this node's ports is taken: the JVM
        would die at start, and a broker already there would answer in its place."""
        wanted = [self.port, self.controller_port] + ([self.secure.port] if self.secure else [])
        for port in wanted:
            if ports.taken(port):
                raise BrokerError(
                    f"cannot start Kafka on 127.0.0.1:{port}: the port is taken by {ports.holder(port)}. "
                    f"Stop that process, or give this broker other ports (FACESTREAM_KAFKA_PORT=N uses N and N+1)."
                )

    def install_jars(self) -> None:
        """Fill ``lib/`` from Maven Central once, and again whenever ``pom.xml`` changes."""
        pom = resources.files("facestream.broker") / "pom.xml"
        digest = hashlib.sha256(pom.read_bytes()).hexdigest()
        marker = self.lib / ".pom-sha256"
        if marker.exists() and marker.read_text() == digest:
            return
        mvn = shutil.which("mvn")
        if mvn is None:
            raise BrokerError("Maven (`mvn`) is needed once to fetch Kafka's jars; install it (apt-get install maven)")
        shutil.rmtree(self.lib, ignore_errors=True)
        progress("fetching Apache Kafka's jars from Maven Central (first time only) ...\n")
        with resources.as_file(pom) as pom_path:
            cmd = [
                mvn,
                "-q",
                "-B",
                "-f",
                str(pom_path),
                "dependency:copy-dependencies",
                f"-DoutputDirectory={self.lib}",
                "-DincludeScope=runtime",
            ]
            done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise BrokerError(f"Maven could not fetch Kafka's jars:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
        marker.write_text(digest)

    # -- internals --------------------------------------------------------------------------

    def kill(self) -> int | None:
        """SIGKILL, as a crash: no clean shutdown, no leadership handed over; return the pid killed."""
        pid = self._pid()
        if pid is not None:
            os.kill(pid, signal.SIGKILL)
            while _alive(pid):
                time.sleep(0.05)
            self.pid_file.unlink(missing_ok=True)
        return pid

    def _properties(self) -> str:
        if self.quorum is None:
            quorum, replication = f"controller.quorum.bootstrap.servers=127.0.0.1:{self.controller_port}", 1
        else:
            voters = ",".join(f"{node}@127.0.0.1:{port}" for node, port in sorted(self.quorum.voters.items()))
            quorum, replication = f"controller.quorum.voters={voters}", self.quorum.replication
        text = SERVER_PROPERTIES.format(
            node_id=self.node_id,
            quorum=quorum,
            port=self.port,
            controller_port=self.controller_port,
            data_dir=self.data,
            max_message_bytes=kafka_clients.MAX_MESSAGE_BYTES,
            replication=replication,
            min_isr=min(2, replication),
        )
        if self.secure is None:
            return text
        secure = SECURE_PROPERTIES.format(
            port=self.port,
            controller_port=self.controller_port,
            secure_port=self.secure.port,
            keystore=self.secure.keystore,
            keystore_password=self.secure.keystore_password,
        )
        if self.secure.admins is not None:
            admins = ";".join(f"User:{name}" for name in ("ANONYMOUS", *self.secure.admins))
            secure += AUTHORIZER_PROPERTIES.format(super_users=admins)
        replaced = {line.split("=", 1)[0] for line in secure.splitlines()}
        kept = [line for line in text.splitlines() if line.split("=", 1)[0] not in replaced]
        return "\n".join(kept) + "\n" + secure

    def _format_storage(self, java: str) -> None:
        if (self.data / "meta.properties").exists():
            return
        cid = self.quorum.cluster_id if self.quorum else new_cluster_id()
        cmd = [
            java,
            "-cp",
            f"{self.lib}/*",
            f"-Dlog4j2.configurationFile={self.log4j_config()}",
            "kafka.tools.StorageTool",
            "format",
            *([] if self.quorum else ["--standalone"]),  # a cluster's quorum is its fixed voters
            f"--cluster-id={cid}",
            # KIP-890's transaction protocol (transactions' server-side defence): Kafka 4 turns it on
            # for a new cluster of the latest release; said here so that no default can change it.
            f"--feature=transaction.version={TRANSACTION_VERSION}",
            "-c",
            str(self.config),
        ]
        for name, password in (self.secure.users if self.secure else {}).items():
            cmd += ["--add-scram", f"SCRAM-SHA-512=[name={name},password={password}]"]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise BrokerError(f"formatting Kafka storage failed:\n{done.stdout}{done.stderr}")

    def features(self, bootstrap: str | None = None) -> dict[str, str]:
        """The finalized feature levels (KIP-584) of the cluster at ``bootstrap`` (this broker's by
        default), as Kafka's own ``kafka-features.sh describe`` reads them with this broker's jars."""
        cmd = [
            find_java(),
            f"-Dlog4j2.configurationFile={self.log4j_config()}",
            "-cp",
            f"{self.lib}/*",
            "org.apache.kafka.tools.FeatureCommand",
            "--bootstrap-server",
            bootstrap or self.bootstrap,
            "describe",
        ]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise BrokerError(f"kafka-features describe failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
        return dict(re.findall(r"Feature: (\S+)\s.*?FinalizedVersionLevel: (\S+)", done.stdout))

    def log4j_config(self) -> Path:
        """Kafka's log4j2 configuration, written into the broker folder (tools use it too)."""
        target = self.root / "log4j2.xml"
        target.write_bytes((resources.files("facestream.broker") / "log4j2.xml").read_bytes())
        return target

    def _pid(self) -> int | None:
        try:
            pid = int(self.pid_file.read_text())
        except (FileNotFoundError, ValueError):
            return None
        if not _alive(pid):
            self.pid_file.unlink(missing_ok=True)
            return None
        return pid

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_file.read_text(errors="replace").splitlines()[-lines:])
        except FileNotFoundError:
            return "(no log)"


def new_cluster_id() -> str:
    """16 random bytes in URL-safe base64, as ``kafka-storage random-uuid`` makes, and like Kafka's own
    never starting with "-", which the storage tool would read as an option (1 start in 64 failed so)."""
    while True:
        made = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not made.startswith("-"):
            return made


def find_java() -> str:
    """The ``java`` on PATH (or in ``$JAVA_HOME``), checked to be version 17 or newer."""
    home = os.environ.get("JAVA_HOME")
    java = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    if not java or not Path(java).exists():
        raise BrokerError(f"Kafka 4 needs Java {MIN_JAVA}+; none found (apt-get install openjdk-17-jre-headless)")
    out = subprocess.run([java, "-version"], capture_output=True, text=True).stderr
    match = re.search(r'version "(\d+)', out)
    if not match or int(match.group(1)) < MIN_JAVA:
        raise BrokerError(f"Kafka 4 needs Java {MIN_JAVA}+, found: {out.splitlines()[0] if out else java}")
    return java


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie child of ours still answers kill(0): look at its state.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except (FileNotFoundError, IndexError):
        return True


def progress(text: str) -> None:
    sys.stderr.write(text)
    sys.stderr.flush()
