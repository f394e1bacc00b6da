"""The dashboard's two readers of Kafka, each in a daemon thread: the records (frames, detection and
pose events, alerts, camera statuses) through a viewer consumer that never commits, and the consumer groups (members,
committed offsets, lag) through the admin API. Neither writes anything."""

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from prometheus_client import CollectorRegistry, Counter

from facestream import kafka_clients
from facestream.dashboard.config import DashboardConfig
from facestream.dashboard.state import DashboardState
from facestream.health import Readiness
from facestream.schemas import (
    SchemaError,
    unpack_alert,
    unpack_camera_status,
    unpack_detection,
    unpack_frame,
    unpack_pose,
)

log = logging.getLogger(__name__)
OFFSET_TAIL_BASE = -2000  # librdkafka's logical offset "N before the end" is OFFSET_TAIL_BASE - N
VIEWER_PREFIX = kafka_clients.VIEWER_GROUP_PREFIX  # throwaway groups of viewers (this one's too): not shown


class RecordReader:
    """Feeds the state from the topics, starting at their ends (the alerts a few records back)."""

    def __init__(
        self, config: DashboardConfig, state: DashboardState, readiness: Readiness, registry: CollectorRegistry
    ) -> None:
        self.config, self.state, self.readiness = config, state, readiness
        self.read = Counter("facestream_dashboard_records", "Records read, by topic.", ["topic"], registry=registry)
        self.unreadable = Counter(
            "facestream_dashboard_unreadable_records", "Records that broke their schema.", ["topic"], registry=registry
        )
        # Per topic: how its records are read, and what the state does with them.
        self.handlers: dict[str, tuple[Callable, Callable]] = {
            **dict.fromkeys(config.frames_topics, (unpack_frame, state.on_frame)),
            config.detections_topic: (unpack_detection, state.on_event),
            config.poses_topic: (unpack_pose, state.on_event),
            config.alerts_topic: (unpack_alert, state.on_alert),
            config.status_topic: (unpack_camera_status, state.on_status),
        }

    def start(self) -> None:
        threading.Thread(target=self._run, name="dashboard-records", daemon=True).start()

    def _assigned(self, consumer, partitions) -> None:
        for tp in partitions:
            if tp.topic == self.config.alerts_topic:
                tp.offset = OFFSET_TAIL_BASE - self.config.alerts_kept
        consumer.assign(partitions)
        self.readiness.mark("partitions_assigned", bool(partitions))

    def _run(self) -> None:
        # A topic made after the start (by the services) is found at the next metadata refresh.
        refresh: dict[str, Any] = {"topic.metadata.refresh.interval.ms": 5000}
        records = kafka_clients.records(list(self.handlers), lambda: False, False, on_assign=self._assigned, **refresh)
        for msg in records:
            topic = msg.topic()
            unpack, apply = self.handlers[topic]
            try:
                value = unpack(msg.value())
            except SchemaError as exc:
                self.unreadable.labels(topic).inc()
                log.warning("unreadable record at %s/%d@%d: %s", topic, msg.partition(), msg.offset(), exc)
                continue
            self.read.labels(topic).inc()
            apply(value)


class GroupReader:
    """Every consumer group but viewers and idle ones (no members, nothing to catch up on): its state,
    members (client id, host, partitions) and lag (the topics' ends minus the group's committed
    offsets), every ``groups_interval_s`` seconds."""

    def __init__(self, config: DashboardConfig, state: DashboardState) -> None:
        self.config, self.state = config, state

    def start(self) -> None:
        threading.Thread(target=self._run, name="dashboard-groups", daemon=True).start()

    def _run(self) -> None:
        admin = kafka_clients.admin()
        while True:
            try:
                self.state.on_groups(self._groups(admin))
            except Exception as exc:  # the broker away for a while: say so on the page and keep trying
                log.warning("cannot read the consumer groups: %s", exc)
                self.state.on_groups([{"group": "(unreadable)", "error": str(exc)}])
            time.sleep(self.config.groups_interval_s)

    def _groups(self, admin) -> list[dict]:
        from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
        from confluent_kafka.admin import OffsetSpec

        timeout = max(5.0, self.config.groups_interval_s)
        listed = admin.list_consumer_groups(request_timeout=timeout).result()
        ids = sorted(g.group_id for g in listed.valid if not g.group_id.startswith(VIEWER_PREFIX))
        if not ids:
            return []
        described = {gid: f.result() for gid, f in admin.describe_consumer_groups(ids, request_timeout=timeout).items()}
        committed = {}
        for gid in ids:  # one group per request: the API takes no more
            request = [ConsumerGroupTopicPartitions(gid)]
            committed[gid] = admin.list_consumer_group_offsets(request, request_timeout=timeout)[gid].result()
        partitions = {(tp.topic, tp.partition) for c in committed.values() for tp in c.topic_partitions}
        ends = {}
        if partitions:
            asked = {TopicPartition(t, p): OffsetSpec.latest() for t, p in partitions}
            for tp, future in admin.list_offsets(asked, request_timeout=timeout).items():
                ends[(tp.topic, tp.partition)] = future.result().offset
        groups = []
        for gid in ids:
            lag: dict[str, int] = {}
            for tp in committed[gid].topic_partitions:
                if tp.offset >= 0 and (tp.topic, tp.partition) in ends:
                    lag[tp.topic] = lag.get(tp.topic, 0) + max(0, ends[(tp.topic, tp.partition)] - tp.offset)
            description = described[gid]
            if not description.members and not any(lag.values()):
                continue
            groups.append(
                {
                    "group": gid,
                    "state": str(description.state).rsplit(".", 1)[-1].lower(),
                    "members": [
                        {
                            "client_id": m.client_id,
                            "host": m.host,
                            "partitions": sorted(
                                f"{tp.topic}[{tp.partition}]" for tp in (m.assignment.topic_partitions or [])
                            ),
                        }
                        for m in sorted(description.members, key=lambda m: m.client_id)
                    ],
                    "lag": lag,
                }
            )
        return groups
