"""Each camera's state, said on the ``camera-status`` topic: at once when it changes, and every
``interval_s`` while the camera is served, so a reader (the offline rule, the dashboard) learns that a
camera is down from its producer, and that the producer itself is gone when its statuses stop."""

import logging
import time

from confluent_kafka import KafkaException, Producer

from facestream import kafka_clients
from facestream.producers.camera import Camera
from facestream.schemas import CameraStatus, pack_camera_status
from facestream.schemas.camera_status import TEXT_MAX

log = logging.getLogger(__name__)


class StatusReporter:
    def __init__(self, topic: str, interval_s: float) -> None:
        self.topic = topic
        self.interval_s = interval_s
        self.sent = 0
        self._said: dict[str, tuple[str, float]] = {}  # camera id -> (state said, when: monotonic)

    def tick(self, producer: Producer, cameras: list[Camera], force: bool = False) -> None:
        """Send the status of every camera whose state changed or whose last status is ``interval_s`` old."""
        now = time.monotonic()
        for camera in cameras:
            state = camera.state()
            said = self._said.get(camera.camera_id)
            if force or said is None or said[0] != state or now - said[1] >= self.interval_s:
                self._send(producer, camera, state)
                self._said[camera.camera_id] = (state, now)

    def _send(self, producer: Producer, camera: Camera, state: str) -> None:
        live = camera.live_status()
        error = None if live is None or live.error is None else live.error[:TEXT_MAX]
        status = CameraStatus(
            camera_id=camera.camera_id,
            ts_ns=time.time_ns(),
            state=state,
            source=camera.source_name[:TEXT_MAX],
            frames_sent=camera.sent,
            attempts=0 if live is None else live.attempts,
            interval_ms=max(1, round(self.interval_s * 1000)),
            last_frame_ts_ns=camera.last_frame_ts_ns,
            error=error,
        )
        try:
            kafka_clients.send(producer, self.topic, pack_camera_status(status), camera.camera_id.encode())
            self.sent += 1
        except KafkaException as exc:  # the frames go on; the next tick tries again
            log.error("camera %s: status not sent: %s", camera.camera_id, exc.args[0])
