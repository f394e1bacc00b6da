"""The faust app that runs the rules: detection events in, alerts out, per-camera state in a table.

The table ``cameras`` is keyed by camera id, like the detections topic, and has as many partitions:
faust writes each camera's state to the changelog partition of the event being processed, so when a
partition moves to another worker its cameras' state moves with it (rebuilt from the changelog).
The table ``offline`` does the same for the producers' camera statuses (the camera_offline rule),
partitioned as their topic is; a timer looks at its cameras every second for producers gone quiet.
Workers of one app id are one consumer group: start more to share the partitions.
"""

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import faust

from facestream import kafka_settings, paths
from facestream.alerting import kafka_auth, recovery_guard
from facestream.alerting.config import AlertingConfig
from facestream.alerting.rules import offline as offline_rule
from facestream.alerting.rules.camera import on_event, on_pose
from facestream.gallery import Gallery
from facestream.schemas import (
    CameraStatus,
    DetectionEvent,
    PoseEvent,
    SchemaError,
    pack_alert,
    unpack_camera_status,
    unpack_detection,
    unpack_pose,
)

log = logging.getLogger(__name__)
TABLE = "cameras"
OFFLINE_TABLE = "offline"
SILENCE_CHECK_S = 1.0  # how often the worker looks for cameras whose producer went quiet
BATCH, BATCH_WAIT_S = 500, 0.02  # events per batch at most, and the longest a batch waits to fill


def changelog_topic(config: AlertingConfig, table: str = TABLE) -> str:
    """A table's changelog, as faust names it (made before the workers start)."""
    return f"{config.group}-{table}-changelog"


@dataclass
class AlertingStats:
    events: int = 0  # detection events
    poses: int = 0  # pose events
    statuses: int = 0  # camera statuses from the producers
    duplicates: int = 0  # skipped: at or before the last frame seen on their camera
    unreadable: int = 0
    without_embeddings: int = 0  # events of cameras running the stranger rule that carry no embeddings
    recovery_restarts: int = 0  # stalled table recoveries started again (recovery_guard)
    alerts: dict[str, int] = field(default_factory=dict)  # by kind and state, e.g. "stranger new"
    started: float = field(default_factory=time.monotonic)

    def line(self) -> str:
        rate = self.events / max(time.monotonic() - self.started, 1e-9)
        alerts = " ".join(f"{k}={v}" for k, v in sorted(self.alerts.items())) or "none"
        return (
            f"events {self.events} ({rate:.1f}/s) poses {self.poses} statuses {self.statuses} "
            f"duplicates {self.duplicates} "
            f"unreadable {self.unreadable} "
            f"without embeddings {self.without_embeddings} | alerts {alerts}"
        )


def build(
    config: AlertingConfig,
    bootstrap: str,
    partitions: int,
    status_partitions: int,
    gallery: Gallery,
    stats: AlertingStats,
    on_ownership: Callable[[bool], None] = lambda owns: None,
) -> faust.App:
    """The app; ``on_ownership`` is told, after each rebalance, whether this worker owns partitions."""
    data = paths.home() / "alerting"  # faust's own folder per app id below it (its default is in the cwd)
    data.mkdir(parents=True, exist_ok=True)
    app = faust.App(
        config.group,
        broker=f"kafka://{bootstrap}",
        store="memory://",  # state is rebuilt from the changelog topic when partitions are assigned
        datadir=str(data / "{conf.id}"),
        web_enabled=False,
        topic_partitions=partitions,
        producer_acks=-1,
        # A worker that dies without leaving the group loses its partitions to the others after this
        # many seconds (faust's default is 60).
        broker_session_timeout=10.0,
        broker_heartbeat_interval=3.0,
        # No standby copies of the table: a worker taking over a partition rebuilds its cameras' state
        # from the changelog (a few hundred bytes per camera). With standbys, the one promoted after a
        # worker died sometimes waited for changelog records that never came, and stalled the partition.
        table_standby_replicas=0,
        **kafka_auth.faust_options(kafka_settings.load()),  # TLS / SASL as every other client has them
    )

    @app.on_partitions_assigned.connect
    async def assigned(_app, assigned, **_kwargs) -> None:
        on_ownership(bool(assigned))

    raw = {"key_type": bytes, "value_type": bytes, "key_serializer": "raw", "value_serializer": "raw"}
    alerts_topic = app.topic(config.alerts_topic, **raw)
    cameras = app.Table(TABLE, default=dict, partitions=partitions, key_type=str, use_partitioner=True)
    offline = app.Table(OFFLINE_TABLE, default=dict, partitions=status_partitions, key_type=str, use_partitioner=True)
    warned: set[str] = set()

    async def send(alerts: list) -> None:
        for alert in alerts:
            key = f"{alert.kind} {alert.state}"
            stats.alerts[key] = stats.alerts.get(key, 0) + 1
            await alerts_topic.send(key=alert.camera_id.encode(), value=pack_alert(alert))

    async def run_batch(values: list[bytes], read, apply, table=cameras) -> None:
        """``apply(camera state, event)`` for each readable event, each camera's state written once per
        batch (not once per event), then the alerts sent. The table places a camera's state by hashing
        its id as the producers place its events (use_partitioner), so that holds whichever event of the
        batch is being acknowledged; no await between reading and writing the states, so the two agents
        never interleave on one camera."""
        touched: dict[str, dict] = {}
        found = []
        for value in values:
            event = read(value)
            if event is None:
                continue
            camera = touched.get(event.camera_id)
            if camera is None:
                camera = touched[event.camera_id] = table[event.camera_id]
            alerts = apply(camera, event)
            if alerts is None:
                stats.duplicates += 1
                continue
            found += alerts
        for camera_id, camera in touched.items():
            table[camera_id] = camera
        await send(found)

    def on_detection(camera: dict, event: DetectionEvent) -> list | None:
        settings = config.for_camera(event.camera_id)
        _check_embeddings(event, settings, warned, stats)
        return on_event(camera, event, gallery, settings)

    @app.agent(app.topic(config.detections_topic, **raw))
    async def alerting(stream):
        async for values in stream.take(BATCH, within=BATCH_WAIT_S):
            await run_batch(values, lambda value: _readable(value, unpack_detection, stats), on_detection)

    @app.agent(app.topic(config.poses_topic, **raw))
    async def falls(stream):
        async for values in stream.take(BATCH, within=BATCH_WAIT_S):
            await run_batch(
                values,
                lambda value: _readable(value, unpack_pose, stats),
                lambda camera, event: on_pose(camera, event, config.for_camera(event.camera_id)),
            )

    def on_camera_status(camera: dict, status: CameraStatus) -> list | None:
        settings = config.for_camera(status.camera_id)
        if settings.off("camera_offline", status.ts_ns):
            return []
        return offline_rule.on_status(camera, status, time.time_ns(), settings.camera_offline)

    @app.agent(app.topic(config.status_topic, **raw))
    async def camera_statuses(stream):
        async for values in stream.take(BATCH, within=BATCH_WAIT_S):
            await run_batch(
                values, lambda value: _readable(value, unpack_camera_status, stats), on_camera_status, offline
            )

    @app.timer(SILENCE_CHECK_S)
    async def silence() -> None:
        """Cameras whose producer went quiet, among this worker's (a faust timer: no event to write from,
        so the table places each camera's state by its key, as it does from the agent)."""
        now, found = time.time_ns(), []
        for camera_id, camera in list(offline.items()):
            settings = config.for_camera(camera_id)
            if not settings.off("camera_offline", now):
                alerts = offline_rule.on_silence(camera, camera_id, now, settings.camera_offline)
                if alerts:
                    offline[camera_id] = camera
                    found += alerts
        await send(found)

    def restarted() -> None:
        stats.recovery_restarts += 1

    recovery_guard.watch(app, config.recovery_stall_s, restarted)
    if config.stats_interval:

        @app.timer(config.stats_interval)
        async def report() -> None:
            log.info("%s", stats.line())

    return app


def _readable(value: bytes, unpack, stats: AlertingStats):
    """The event ``unpack`` makes of ``value``, or None (counted, said) when it cannot."""
    try:
        event = unpack(value)
    except SchemaError as exc:
        stats.unreadable += 1
        log.warning("skipping an unreadable event: %s", exc)
        return None
    if isinstance(event, PoseEvent):
        stats.poses += 1
    elif isinstance(event, CameraStatus):
        stats.statuses += 1
    else:
        stats.events += 1
    return event


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
