"""Each camera's state, published on the ``camera-status`` topic: at once when it changes, and every
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
# A status is sent once this share of the interval has passed, though each promises the next within the
# whole interval: the reporter runs between frames, and a producer busy with a frame (or a slow one)
# comes to it late. Sent at the full interval, 123 of 169 gaps of a demo ran over it, by up to 10%.
SEND_AT = 0.8


class StatusReporter:
    """Says a camera's status when its state changes, when it sends its first frame in that state (a
    camera back from an outage is back once a frame went, which its reader learns first), and often
    enough that the next comes within ``interval_s`` (every ``SEND_AT`` of it)."""

    def __init__(self, topic: str, interval_s: float) -> None:
        self.topic = topic
        self.interval_s = interval_s
        self.sent = 0
        self._entered: dict[str, tuple[str, int]] = {}  # camera id -> (its state, frames it had sent then)
        self._said: dict[str, tuple[tuple[str, bool], float]] = {}  # camera id -> (what was published, when)

    def tick(self, producer: Producer, cameras: list[Camera], force: bool = False) -> None:
        """Send the status of every camera whose state changed or whose last status is due."""
        now = time.monotonic()
        for camera in cameras:
            state = camera.state()
            entered = self._entered.get(camera.camera_id)
            if entered is None or entered[0] != state:
                entered = self._entered[camera.camera_id] = (state, camera.sent)
            news = (state, camera.sent > entered[1])
            said = self._said.get(camera.camera_id)
            if force or said is None or said[0] != news or now - said[1] >= SEND_AT * self.interval_s:
                self._send(producer, camera, state)
                self._said[camera.camera_id] = (news, now)

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
