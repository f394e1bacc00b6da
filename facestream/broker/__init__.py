"""A real single-node Apache Kafka 4.x broker (KRaft) for development, demos and tests."""

from facestream.broker.local import LocalBroker

__all__ = ["LocalBroker"]
