"""The worker that runs the rules: detection and pose events and camera statuses in, alerts out,
per-camera state in changelog-backed tables.

Workers of one group share the input topics' partitions (Kafka's range assignment: partition n of the
detections and of the poses topic go to the same worker, as a camera's events of both kinds update
one state). The table ``cameras`` keeps each camera's state in the changelog partition of its events'
partition number, so when a partition moves to another worker its cameras' state moves with it; the
table ``offline`` does the same for the producers' camera statuses (the camera_offline rule), and a
check every second looks at its cameras for producers gone quiet.

Records come 500 at a time from librdkafka; each batch's alerts and changed states are written and
acknowledged before its offsets are committed (at least once: a batch replayed after a crash finds
its events already applied to the state and raises nothing again).
"""

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgpack
import numpy as np

from facestream import gallery, health, kafka_clients
from facestream.alerting import topics
from facestream.alerting.config import AlertingConfig
from facestream.alerting.rules import camera_offline as offline_rule
from facestream.alerting.rules.camera import RuleFailed, lend, on_event, on_pose
from facestream.alerting.rules.recognition import Recognition
from facestream.alerting.rules.state import written
from facestream.alerting.table import Table, check_written
from facestream.alerting.topics import OFFLINE_TABLE, changelog_topic
from facestream.config import start_back_s
from facestream.consumer_group import GroupMember
from facestream.counters import Counters, counter
from facestream.gallery import Gallery
from facestream.histograms import LATENCY_S, Histogram
from facestream.schemas import (
    Alert,
    CameraStatus,
    DetectionEvent,
    PoseEvent,
    SchemaError,
    pack_alert,
    unpack_camera_status,
    unpack_detection,
    unpack_pose,
)
from facestream.service import Every, Service

log = logging.getLogger(__name__)
SILENCE_CHECK_S = 1.0  # how often the worker looks for cameras whose producer went quiet
BATCH, BATCH_WAIT_S = 500, 0.02  # records per batch at most, and the longest a batch waits to fill
SESSION_TIMEOUT_S = 10.0  # a worker that dies without leaving the group loses its partitions after this
# A worker that lost its partitions and got none back this long makes a new consumer (the group member's
# policy, facestream.consumer_group; in CI, after a rolling restart of a three-node cluster, one never
# joined again by itself).
REJOIN_AFTER_S = 20.0
# A turn of the worker's loop this long means it was not listening (its process paused, the machine
# stalled, a batch that took that long): silence before it does not count against producers.
STOOD_STILL_S = 5.0
# An input topic's route: how its records are read (SchemaError: not readable), the table of their
# state, and what a record does to its camera's state (None: a duplicate).
Route = tuple[Callable[[bytes], Any], Table, Callable[[dict, Any], list[Alert] | None]]


@dataclass(eq=False)  # a collector in a registry: hashed by identity
class AlertingStats(Counters):
    events: int = counter("events", "facestream_alerting_detection_events", "Detection events read")
    poses: int = counter("poses", "facestream_alerting_pose_events", "Pose events read")
    statuses: int = counter(
        "statuses", "facestream_alerting_camera_statuses", "Camera status records read (the camera_offline rule's)"
    )
    duplicates: int = counter(
        "duplicates", "facestream_alerting_duplicates", "Records at or before the last one seen for their camera"
    )
    unreadable: int = counter("unreadable", "facestream_alerting_unreadable", "Events that failed their schema")
    dead_letters: dict = counter(
        "dead letters",
        "facestream_alerting_dead_letters",
        "Records dead-lettered by stage: read (unreadable), rule, handle (failed on it), send (refused)",
        labels=("stage",),
    )
    without_embeddings: int = counter(
        "without embeddings",
        "facestream_alerting_without_embeddings",
        "Events of cameras running the stranger rule that carry no embeddings",
    )
    faces_lent: int = counter(
        "faces lent their track's embedding",
        "facestream_alerting_faces_lent",
        "Faces without an embedding given their detector track's last one (schemas.tracks)",
    )
    alerts: dict = counter(
        "alerts", "facestream_alerts", "Alert records sent, by kind and state", labels=("kind", "state")
    )
    latency: Histogram = field(
        default_factory=lambda: Histogram(
            "facestream_event_to_alert_seconds",
            "Seconds from an event's record reaching Kafka to the broker's acknowledgement of an alert it made",
            LATENCY_S,
        )
    )
    started: float = field(default_factory=time.monotonic)

    def line(self) -> str:
        rate = self.events / max(time.monotonic() - self.started, 1e-9)
        return f"{rate:.1f} events/s, {self.counted()}"

    def collect(self, **names: str):
        yield from super().collect(**names)
        yield self.latency.family()


def run(config: AlertingConfig, bootstrap: str | None = None) -> AlertingStats:
    return Worker(config, bootstrap).run()


class Worker(Service):
    """One member of the alerting group: ``run`` until SIGINT/SIGTERM."""

    def __init__(self, config: AlertingConfig, bootstrap: str | None = None) -> None:
        self.config, self.stats = config, AlertingStats()
        super().__init__(
            bootstrap,
            health.Readiness("gallery_loaded", "partitions_assigned"),
            self.stats,
            config,
            batch=BATCH,
            wait_s=BATCH_WAIT_S,
        )
        self.registry.register(self.stats)
        self.listening_since_ns = 0  # wall clock; set when the loop comes back from standing still
        self.last_turn = time.monotonic()
        self.cameras = Table(changelog_topic(config), self.bootstrap, written)
        self.offline = Table(changelog_topic(config, OFFLINE_TABLE), self.bootstrap)
        self.warned: set[str] = set()  # cameras already warned about for lacking embeddings
        self.follower: gallery.Follower | None = None
        self.gallery = Gallery()
        self.recognition = Recognition(self.gallery, [])  # who the faces of the batch at hand are
        self.lent: dict[int, tuple[int, ...]] = {}  # id of a detection event of the batch -> its faces lent one
        self.producer = None
        # What each input topic's records are, and which table and rule they go to.
        self.routes: dict[str, Route] = {
            config.detections_topic: (unpack_detection, self.cameras, self._detection),
            config.poses_topic: (unpack_pose, self.cameras, self._pose),
            config.status_topic: (unpack_camera_status, self.offline, self._status),
        }

    def on_start(self) -> None:
        """The topics made, the gallery loaded (and followed), the producer of alerts and states."""
        config = self.config
        topics.prepare(config, self.bootstrap)
        self.follower = gallery.Follower(self.bootstrap, config.gallery_topic).start()
        self.gallery = self.follower.gallery
        self.readiness.mark("gallery_loaded")
        self.producer = kafka_clients.producer(f"{config.group}-alerts", self.bootstrap, **{"linger.ms": 2})
        log.info(
            "alerting %s, rules %s: %s, %s, %s -> %s, gallery %s (%d people)",
            config.group,
            config.rules,
            config.detections_topic,
            config.poses_topic,
            config.status_topic,
            config.alerts_topic,
            config.gallery_topic,
            len(self.gallery.entries()),
        )

    def on_stop(self, failed: bool) -> None:
        if self.producer is not None:
            self.producer.flush(30)
        if self.follower is not None:
            self.follower.stop()
            if self.follower.failed is not None:
                raise self.follower.failed  # instead of a clean exit: the worker stopped because of it

    def timers(self) -> list[Every]:
        return [Every(SILENCE_CHECK_S, self._silence)]

    def next_batch(self) -> list:
        """A batch; a turn that comes long after the last (a paused process) is said first."""
        now = time.monotonic()
        if now - self.last_turn >= STOOD_STILL_S:
            self._stood_still(now - self.last_turn)
        self.last_turn = now
        return super().next_batch()

    def join(self) -> GroupMember:
        """A member of the group on the input topics, assigned by range: partition n of every input
        topic to one worker."""
        return GroupMember(
            self.bootstrap,
            self.config.group,
            list(self.routes),
            f"{self.config.group}-worker",
            strategy="range",
            start_at=self.config.start_at,
            start_back_s=start_back_s(self.config.start_at),
            session_timeout_s=SESSION_TIMEOUT_S,
            rejoin_after_s=REJOIN_AFTER_S,
            on_assign=self._assigned,
            on_revoke=self._revoked,
            on_lost=self._revoked,
            on_ownership=self.owned,
        )

    def _assigned(self, partitions) -> None:
        """Rebuild the state of the cameras of the partitions just given (before their first record)."""
        for table, numbers in self._by_table(partitions):
            table.restore(numbers)

    def _revoked(self, partitions) -> None:
        """Forget the cameras of the partitions taken away (their batches were committed already, or
        are processed again by the next owner, to no effect)."""
        for table, numbers in self._by_table(partitions):
            table.drop(numbers)

    def _by_table(self, partitions) -> list[tuple[Table, set[int]]]:
        """Each table with the partition numbers of ``partitions`` whose records it keeps (detections
        and poses: ``cameras``; camera statuses: ``offline``)."""
        return [
            (table, {tp.partition for tp in partitions if self.routes[tp.topic][1] is table})
            for table in (self.cameras, self.offline)
        ]

    def handle(self, messages: list) -> None:
        """Each readable record through its rule, in order; then the alerts and the changed states
        written once each, and waited for. The faces of the batch's detection events are matched
        against the gallery together first."""
        records = [(msg, event) for msg in messages if (event := self._read(msg)) is not None]
        self.lent = {}
        for index, (msg, event) in enumerate(records):
            if isinstance(event, DetectionEvent):  # faces lent their track's embedding, then matched with the rest
                event, lent = lend(self.cameras.state(event.camera_id, msg.partition()), event)
                records[index] = (msg, event)
                self.lent[id(event)] = lent
                self.stats.faces_lent += len(lent)
        self.recognition = Recognition(self.gallery, (e for _, e in records if isinstance(e, DetectionEvent)))
        found: list[tuple[Alert, Any]] = []
        for msg, event in records:
            _, table, apply = self.routes[msg.topic()]
            try:
                alerts = apply(table.state(event.camera_id, msg.partition()), event)
            except RuleFailed as exc:  # logged where it failed; the other rules' alerts go out
                self._dead_letter(msg, "rule", exc)
                alerts = exc.alerts
            except Exception as exc:  # a mistake beside the rules costs this record, never the worker
                log.exception("handling %s/%d@%d failed", msg.topic(), msg.partition(), msg.offset())
                self._dead_letter(msg, "handle", exc)
                alerts = []
            if alerts is None:
                self.stats.duplicates += 1
                continue
            table.changed(event.camera_id)
            found += [(alert, msg) for alert in alerts]
        self._send(found)

    def _read(self, msg) -> DetectionEvent | PoseEvent | CameraStatus | None:
        """The record's event, or None (an unreadable record: dead-lettered, counted and logged)."""
        try:
            event = self.routes[msg.topic()][0](msg.value() or b"")
        except SchemaError as exc:
            self.stats.unreadable += 1
            log.warning("skipping an unreadable event at %s/%d@%d: %s", msg.topic(), msg.partition(), msg.offset(), exc)
            self._dead_letter(msg, "read", exc)
            return None
        if isinstance(event, PoseEvent):
            self.stats.poses += 1
        elif isinstance(event, CameraStatus):
            self.stats.statuses += 1
        else:
            self.stats.events += 1
        return event

    def _send(self, alerts: list[tuple[Alert, Any]]) -> None:
        """Each alert packed and sent (one the contract refuses dead-lettered instead, with the record
        that made it), then the changed states; all acknowledged before the batch is committed."""
        for alert, source in alerts:
            try:
                value = pack_alert(alert)
            except (SchemaError, TypeError, ValueError, OverflowError) as exc:
                log.error(
                    "an alert the contract refuses (%s %s on %s): %s", alert.kind, alert.state, alert.camera_id, exc
                )
                self._dead_letter(source, "send", exc, _as_far_as_packs(alert), key=alert.camera_id)
                continue
            self.stats.add("alerts", (alert.kind, alert.state))
            kafka_clients.send(self.producer, self.config.alerts_topic, value, alert.camera_id.encode())
        written = self.cameras.write_changed(self.producer) + self.offline.write_changed(self.producer)
        if alerts or written:
            check_written(self.producer, self.config.alerts_topic)
        stamps = [source.timestamp() for _, source in alerts if hasattr(source, "timestamp")]  # its record's
        made = [ms for kind, ms in stamps if kind]  # (kind 0: the record has none)
        if made:
            self.stats.latency.observe(time.time() - np.asarray(made) / 1000)

    def _dead_letter(self, source, stage: str, error: Exception, value: bytes | None = None, key: str = "") -> None:
        """To the dead-letter topic with why: ``value`` (else the record ``source`` as it came), the
        headers of schemas/README.md (``source`` None: made by the worker's own clock, not a record)."""
        self.stats.add("dead_letters", stage)
        headers = kafka_clients.dead_letter_headers(source, stage, error, self.config.group)
        if value is None and source is not None:
            value = source.value()
        record_key = key.encode() if key else (source.key() if source is not None else None)
        kafka_clients.send(self.producer, self.config.dead_letter_topic, value, record_key, headers=headers)

    def _detection(self, camera: dict, event: DetectionEvent) -> list | None:
        settings = self.config.for_camera(event.camera_id)
        _check_embeddings(event, settings, self.warned, self.stats)
        return on_event(camera, event, self.gallery, settings, self.recognition, self.lent.get(id(event), ()))

    def _pose(self, camera: dict, event: PoseEvent) -> list | None:
        return on_pose(camera, event, self.config.for_camera(event.camera_id), self.gallery)

    def _status(self, camera: dict, status: CameraStatus) -> list | None:
        settings = self.config.for_camera(status.camera_id)
        if settings.off("camera_offline", status.ts_ns):
            return []
        return offline_rule.on_status(camera, status, time.time_ns(), settings.of(offline_rule.OfflineSettings))

    def _stood_still(self, seconds: float) -> None:
        self.listening_since_ns = time.time_ns()
        log.warning(
            "the worker's loop stood still for %.0f s (a long restore or batch, a paused process, a stalled "
            "machine): producers' silence counts from now",
            seconds,
        )

    def _silence(self) -> None:
        """Cameras whose producer went quiet, among this worker's."""
        now, found = time.time_ns(), []
        for camera_id, camera in self.offline.items():
            settings = self.config.for_camera(camera_id)
            if not settings.off("camera_offline", now):
                alerts = offline_rule.on_silence(
                    camera, camera_id, now, settings.of(offline_rule.OfflineSettings), self.listening_since_ns
                )
                if alerts:
                    self.offline.changed(camera_id)
                    found += [(alert, None) for alert in alerts]
        if found:
            self._send(found)


def _as_far_as_packs(alert: Alert) -> bytes:
    """An alert the contract refuses, as a dead letter carries it: its fields unchecked, or its repr."""
    try:
        return msgpack.packb(alert.fields())
    except (TypeError, ValueError, OverflowError):
        return repr(alert).encode()


def _check_embeddings(event: DetectionEvent, settings, warned: set[str], stats: AlertingStats) -> None:
    """Say so, once per camera, when the stranger rule gets faces without embeddings."""
    if "stranger" in settings.rules and event.faces and event.embedder is None:
        stats.without_embeddings += 1
        if event.camera_id not in warned:
            warned.add(event.camera_id)
            log.warning(
                "events of camera %s carry no embeddings: the stranger rule needs the detector to run with "
                "--embedder sface",
                event.camera_id,
            )
