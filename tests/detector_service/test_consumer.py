"""The detector's group member on the real broker: its commits cover only frames that are done.
What every member does (placement, rejoining, idleness) is tested in tests/facestream/test_consumer_group.py."""

import time
import uuid

from confluent_kafka import KafkaError, TopicPartition
from helpers.kafka import committed_total

from facestream import kafka_clients, kafka_topics
from facestream.detector_service.kafka.consumer import FramesMember


def poll_until(member: FramesMember, condition, timeout_s: float = 45.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"still {member.assigned} after {timeout_s} s"
        member.consume(10, 0.2)


def test_an_asynchronous_commit_that_fails_is_sent_again(bootstrap: str) -> None:
    tag = uuid.uuid4().hex[:10]
    topic, group = f"t-{tag}.frames", f"t-{tag}.detector"
    kafka_topics.ensure_topics({topic: 1}, bootstrap)
    producer = kafka_clients.producer("commit-test", bootstrap)
    for i in range(3):
        producer.produce(topic, b"frame %d" % i, b"cam")
    assert producer.flush(30) == 0
    member = FramesMember(bootstrap, group, topic, "test-member", publisher_flush=lambda: 0)
    try:
        taken: list = []
        deadline = time.monotonic() + 45
        while len(taken) < 3:  # every frame taken here (poll_until's own polls would drop some)
            assert time.monotonic() < deadline, f"{len(taken)} of 3 frames after 45 s"
            taken += [msg for msg in member.consume(10, 0.2) if not msg.error()]
        for msg in taken:
            member.tracker.track((topic, 0), msg.offset())
            member.tracker.done((topic, 0), msg.offset())
        member.commit(asynchronous=True)
        assert member.tracker.committable() == {}  # sent, not answered yet: not sent twice
        # The broker's answer, as librdkafka hands it over when a commit fails (e.g. mid-rebalance).
        member._committed(KafkaError(KafkaError.REBALANCE_IN_PROGRESS), [TopicPartition(topic, 0, 3)])
        assert member.tracker.committable() == {(topic, 0): 3}
        member.commit(asynchronous=True)
        poll_until(member, lambda: member.tracker.committable(again=True) == {})  # answered: committed
        assert committed_total(bootstrap, group, topic) == 3
    finally:
        member.close()
