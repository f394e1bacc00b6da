"""The detector's group membership on the real broker: what it owns and since when."""

import time
import uuid

from confluent_kafka import Consumer

from facestream import kafka_clients
from facestream.detector_service.consumer import GroupMember


def poll_until(member: GroupMember, condition, timeout_s: float = 45.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"still {member.assigned} after {timeout_s} s"
        member.consume(10, 0.2)


def test_idleness_counts_from_the_latest_assignment(bootstrap: str) -> None:
    # A real bug: --stop-after-idle counted from the first assignment, so a detector idle for a while
    # stopped in the same second that a leaving replica's partitions (and their backlog) reached it.
    tag = uuid.uuid4().hex[:10]
    topic, group = f"t-{tag}.frames", f"t-{tag}.detector"
    kafka_clients.ensure_topics({topic: 2}, bootstrap)
    member = GroupMember(bootstrap, group, topic, "test-member", publisher_flush=lambda: 0)
    try:
        poll_until(member, lambda: len(member.assigned) == 2)
        first = member.assigned_at
        other = Consumer(
            {"bootstrap.servers": bootstrap, "group.id": group, "partition.assignment.strategy": "cooperative-sticky"}
        )
        other.subscribe([topic])
        deadline = time.monotonic() + 45
        while len(member.assigned) != 1:  # both must poll for the group to settle
            assert time.monotonic() < deadline
            other.poll(0.1)
            member.consume(10, 0.1)
        left_at = time.monotonic()
        other.close()  # its partition comes back, as a stopped replica's would
        poll_until(member, lambda: len(member.assigned) == 2)
        assert first is not None and member.assigned_at > left_at > first
    finally:
        member.close()
