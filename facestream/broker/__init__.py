"""A real Apache Kafka 4.x broker (KRaft) for development, demos and tests: one node, or a cluster."""

from facestream.broker.cluster import LocalCluster
from facestream.broker.local import LocalBroker

__all__ = ["LocalBroker", "LocalCluster"]
