"""The dashboard's two readers of Kafka, each in a daemon thread: the records (frames, detection and
pose events, alerts, camera statuses) through a viewer consumer that never commits, and the consumer
groups (members, committed offsets, lag) through the admin API, in a child process. Neither writes
anything."""

import json
import logging
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from confluent_kafka import KafkaException
from prometheus_client import CollectorRegistry, Counter

from facestream import kafka_reading
from facestream.dashboard.config import DashboardConfig
from facestream.dashboard.groups import unreadable
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
        """Each partition from its end as of now, asked for before the page says it is ready: a record
        written once /readyz answers is shown (librdkafka's own "end" is looked up later, and under load
        it lands past what came in meanwhile)."""
        for tp in partitions:
            if tp.topic == self.config.alerts_topic:
                tp.offset = OFFSET_TAIL_BASE - self.config.alerts_kept
                continue
            try:
                tp.offset = consumer.get_watermark_offsets(tp, timeout=10.0)[1]
            except KafkaException as exc:  # its end, looked up by librdkafka as before
                log.warning("dashboard: where %s[%d] ends is not known yet: %s", tp.topic, tp.partition, exc)
        consumer.assign(partitions)
        self.readiness.mark("partitions_assigned", bool(partitions))

    def _run(self) -> None:
        # A topic made after the start (by the services) is found at the next metadata refresh.
        refresh: dict[str, Any] = {"topic.metadata.refresh.interval.ms": 5000}
        records = kafka_reading.records(list(self.handlers), lambda: False, False, on_assign=self._assigned, **refresh)
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
    """The consumer groups (``groups.read_groups``) every ``groups_interval_s`` seconds, read by a child
    process (``groups.py`` says why) that this reader keeps running: one that ends is logged, counted
    and started again a second later, and the page says the groups are unreadable meanwhile."""

    def __init__(self, config: DashboardConfig, state: DashboardState, registry: CollectorRegistry) -> None:
        self.config, self.state = config, state
        self.restarts = Counter(
            "facestream_dashboard_group_reader_restarts",
            "Times the process that reads the consumer groups ended and was started again.",
            registry=registry,
        )
        self._stopping = threading.Event()
        self._child: subprocess.Popen | None = None

    def start(self) -> None:
        threading.Thread(target=self._run, name="dashboard-groups", daemon=True).start()

    def stop(self) -> None:
        """End the child, and start no other."""
        self._stopping.set()
        if self._child is not None:
            self._child.terminate()
            self._child.wait(10)

    def _run(self) -> None:
        command = [sys.executable, "-m", "facestream.dashboard.groups", str(self.config.groups_interval_s)]
        while not self._stopping.is_set():
            # its log goes to ours; a session of its own keeps a terminal's Ctrl-C for the dashboard, which ends it
            self._child = child = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, start_new_session=True)
            log.info("reading the consumer groups in process %d", child.pid)
            assert child.stdout is not None
            for line in child.stdout:
                self.state.on_groups(json.loads(line))
            code = child.wait()
            if self._stopping.is_set():
                return
            why = f"the process reading the consumer groups ({child.pid}) ended with exit code {code}"
            log.error("%s%s; starting another", why, " (librdkafka aborted it)" if code == -signal.SIGABRT else "")
            self.restarts.inc()
            self.state.on_groups(unreadable(why))
            time.sleep(1.0)
