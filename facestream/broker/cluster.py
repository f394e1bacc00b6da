"""A Kafka cluster on this machine: N KRaft nodes (three by default), each broker and controller, from
the same jars as the single broker, in ``$FACESTREAM_HOME/kafka-cluster/node-<id>``.

Node ``i`` listens on ``port + 2(i-1)`` and its controller on the port after it (9092-9097 for three
nodes). Every partition has three replicas and a write needs two (``min.insync.replicas=2``), so the
cluster loses nothing and stays writable while any one node is down. Clients name all nodes
(``bootstrap``), so a client started while node 1 is down still finds the others.
"""

import json
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from facestream import kafka_clients, paths
from facestream.broker.local import BrokerStatus, LocalBroker, Quorum, new_cluster_id, progress
from facestream.errors import BrokerError


class LocalCluster:
    def __init__(
        self, nodes: int = 3, root: Path | None = None, port: int | None = None, lib: Path | None = None
    ) -> None:
        if nodes < 1:
            raise BrokerError(f"a cluster needs at least one node, got {nodes}")
        self.root = root or paths.home() / "kafka-cluster"
        base = port or kafka_clients.local_port()
        ports = {node: base + 2 * (node - 1) for node in range(1, nodes + 1)}
        quorum = Quorum({node: port + 1 for node, port in ports.items()}, self._cluster_id())
        lib = lib or self.root / "lib"  # one copy of the jars for every node (or another broker's)
        self.nodes = {
            node: LocalBroker(self.root / f"node-{node}", port, lib=lib, node_id=node, quorum=quorum)
            for node, port in ports.items()
        }

    @classmethod
    def existing(cls, root: Path | None = None) -> "LocalCluster | None":
        """The cluster ``kafka start --brokers N`` made here before, if any."""
        root = root or paths.home() / "kafka-cluster"
        nodes = len(list(root.glob("node-*")))
        return cls(nodes, root) if nodes else None

    @property
    def bootstrap(self) -> str:
        return ",".join(broker.bootstrap for broker in self.nodes.values())

    def start(self, timeout_s: float = 120.0) -> list[BrokerStatus]:
        """Start every node not running, then wait until all of them answer as one cluster."""
        for broker in self.nodes.values():
            broker.start(wait=False)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            statuses = self.status()
            if all(s.running for s in statuses) and self.brokers_seen() == len(self.nodes):
                progress(f"cluster of {len(self.nodes)} ready: KAFKA_BOOTSTRAP={self.bootstrap}\n")
                return statuses
            time.sleep(1.0)
        tails = "\n".join(f"node {n}:\n{b.log_tail(10)}" for n, b in self.nodes.items())
        raise BrokerError(f"the cluster did not come up within {timeout_s:.0f} s:\n{tails}")

    def stop(self) -> bool:
        """Stop every node at once (one by one, the last ones would wait for a quorum that is leaving);
        return whether any was running."""
        with ThreadPoolExecutor(len(self.nodes)) as pool:
            return any(list(pool.map(lambda broker: broker.stop(), self.nodes.values())))

    def status(self) -> list[BrokerStatus]:
        return [broker.status() for broker in self.nodes.values()]

    def brokers_seen(self) -> int:
        """How many brokers the cluster's metadata lists now (0 when none answers)."""
        try:
            return len(kafka_clients.admin(self.bootstrap, quiet=True).list_topics(timeout=3).brokers)
        except Exception:  # none answers yet
            return 0

    def leader_of(self, topic: str, partition: int = 0) -> int:
        """The node leading a partition now."""
        metadata = kafka_clients.admin(self.bootstrap).list_topics(topic, timeout=10)
        return metadata.topics[topic].partitions[partition].leader

    def active_controller(self) -> int:
        """The node leading the controller quorum now: the newest election any node wrote down."""
        states: list[dict] = []
        for broker in self.nodes.values():
            try:
                states.append(json.loads((broker.data / "__cluster_metadata-0" / "quorum-state").read_text()))
            except (OSError, ValueError):  # not written yet, or being rewritten
                continue
        newest = max(states, key=lambda state: state.get("leaderEpoch", -1), default={})
        if newest.get("leaderId", -1) < 0:
            raise BrokerError("no controller elected yet")
        return int(newest["leaderId"])

    def in_sync(self, topics: list[str]) -> bool:
        """Whether every partition of ``topics`` has all its replicas in sync (a node back has caught up)."""
        metadata = kafka_clients.admin(self.bootstrap).list_topics(timeout=10)
        partitions = [p for t in topics for p in metadata.topics[t].partitions.values()]
        return all(sorted(p.isrs) == sorted(p.replicas) for p in partitions)

    def _cluster_id(self) -> str:
        """One id for every node's storage, made once and kept beside them."""
        marker = self.root / "cluster-id"
        if not marker.exists():
            self.root.mkdir(parents=True, exist_ok=True)
            marker.write_text(new_cluster_id())
        return marker.read_text().strip()
