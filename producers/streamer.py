"""Paces several cameras in one process and publishes their frames, keyed by camera id.

One thread serves every camera in order of its next due time (a heap), so N cameras at F fps cost
one loop, not N threads. The cameras start spread over one frame period, as independent cameras
run out of step. A camera that falls behind does not burst to catch up: its schedule is reset and
the late frames are counted. With a motion gate, a frame of an unchanged scene is held back (counted,
its sequence number used) and the next frame sent says how many were.
"""

import heapq
import logging
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
from confluent_kafka import KafkaException, Producer

from facestream import kafka_clients, logs
from facestream.producers.config import ProducerConfig
from facestream.producers.encoder import JpegEncoder
from facestream.producers.motion import MotionGate
from facestream.producers.sources import CaptureSource, ImageSource, open_source
from facestream.schemas import Frame, pack_frame
from facestream.signals import StopOnSignals

log = logging.getLogger(__name__)

ENCODED_CACHE_LIMIT = 256  # still images whose JPEG is kept


@dataclass
class Camera:
    camera_id: str
    source: ImageSource | CaptureSource  # shared by the cameras that name the same source
    next_seq: int
    sent: int = 0
    late: int = 0
    refused: int = 0  # frames never sent: over --max-frame-bytes, or refused by the client
    failed: int = 0  # frames sent that the broker did not take
    gated: int = 0  # frames held back by the motion gate (the scene had not changed)
    held: int = 0  # of those, the ones since the camera's last frame sent: its next frame's skipped_before
    gate: MotionGate | None = None
    due: float = 0.0
    done: bool = False
    _frames: Iterator[tuple[str | None, np.ndarray]] | None = field(default=None, repr=False)

    def read(self, loop: bool) -> tuple[str | None, np.ndarray] | None:
        """The next (key, frame), reopening the source at its end when looping; None when finished."""
        for _attempt in range(2):
            if self._frames is None:
                self._frames = self.source.frames()
            frame = next(self._frames, None)
            if frame is not None:
                return frame
            self._frames = None
            if not loop:
                return None
        return None


@dataclass
class StreamStats:
    sent: int = 0
    acked: int = 0
    bytes: int = 0
    errors: int = 0  # delivery errors
    refused: int = 0
    gated: int = 0  # held back by the motion gate
    started: float = field(default_factory=time.monotonic)

    def line(self, cameras: list[Camera]) -> str:
        elapsed = max(time.monotonic() - self.started, 1e-9)
        per_camera = " ".join(f"{c.camera_id}={c.sent}" + _troubles(c) for c in cameras)
        captured = self.sent + self.refused + self.gated
        gated = f", held back by the motion gate {self.gated} ({self.gated / captured:.0%})" if self.gated else ""
        return (
            f"sent {self.sent} frames ({self.sent / elapsed:.1f} fps), acked {self.acked}, "
            f"{self.bytes / 1e6:.1f} MB, delivery errors {self.errors}, refused {self.refused}{gated} | {per_camera}"
        )


def _troubles(camera: Camera) -> str:
    counts = {"late": camera.late, "refused": camera.refused, "failed": camera.failed, "gated": camera.gated}
    said = ", ".join(f"{n} {name}" for name, n in counts.items() if n)
    return f" ({said})" if said else ""


class Streamer:
    def __init__(
        self,
        cameras: list[tuple[str, str]],
        config: ProducerConfig,
        bootstrap: str | None = None,
    ) -> None:
        # Sequence numbers start from the clock (µs) so a restarted producer never reuses one.
        first = time.time_ns() // 1000 if config.start_seq is None else config.start_seq
        # One source object per distinct source (opened now, so a name that names nothing fails
        # loudly before anything is sent): still images are then read and kept once for all cameras.
        sources = {spec: open_source(spec) for _, spec in cameras}
        self.cameras = [Camera(cid, sources[spec], next_seq=first) for cid, spec in cameras]
        if config.motion_gate:  # keyframes spread over one interval, as the first frames are over one period
            for i, camera in enumerate(self.cameras):
                phase = config.keyframe_s * i / len(self.cameras)
                camera.gate = MotionGate(config.motion_min_area, config.keyframe_s, phase)
        self.period = 1.0 / config.fps if config.fps > 0 else 0.0
        self.config = config
        self.encoder = JpegEncoder(config.jpeg_quality, config.max_width, config.frame_size)
        self.bootstrap = bootstrap or kafka_clients.bootstrap_servers()
        self.stats = StreamStats()
        self._encoded: dict[str, tuple[bytes, int, int]] = {}

    def run(self) -> StreamStats:
        kafka_clients.check_reachable(self.bootstrap)
        if self.config.motion_gate:
            log.info(
                "motion gate: a frame is sent when %.2g of it changed since the camera's last frame sent, "
                "and at least every %g s; the others are held back and counted",
                self.config.motion_min_area,
                self.config.keyframe_s,
            )
        producer = kafka_clients.producer("facestream-producer", self.bootstrap)  # JPEGs: no compression
        now = time.monotonic()
        # Independent cameras are not in step: their first frames spread over one period, so N
        # cameras make a steady stream instead of N frames at the same instant every period.
        for i, camera in enumerate(self.cameras):
            camera.due = now + self.period * i / len(self.cameras)
        # (due time, index): the next camera to serve is always on top, for any number of cameras
        # (in due order from the start, which is already a heap).
        schedule = [(camera.due, i) for i, camera in enumerate(self.cameras)]
        try:
            with StopOnSignals("flushing, then stopping") as stop:
                self._serve(producer, schedule, stop)
        finally:
            left = producer.flush(30.0)
            if left:
                self.stats.errors += left
                log.error("%d frames were not acknowledged by Kafka within 30 s", left)
            self._report(final=True)
        return self.stats

    def _serve(self, producer: Producer, schedule: list[tuple[float, int]], stop: StopOnSignals) -> None:
        """Send each camera's frame when it is due, earliest first, until every camera is done."""
        next_report = time.monotonic() + self.config.stats_interval
        while not stop.requested and schedule:
            due, index = schedule[0]
            wait = due - time.monotonic()
            if wait > 0:
                producer.poll(min(wait, 0.1))  # serve delivery reports while waiting
                continue
            camera = self.cameras[index]
            self._send_one(producer, camera)
            if camera.done:
                heapq.heappop(schedule)
            else:
                heapq.heapreplace(schedule, (camera.due, index))
            producer.poll(0)
            if time.monotonic() >= next_report:
                next_report = time.monotonic() + self.config.stats_interval
                self._report()

    def _send_one(self, producer: Producer, camera: Camera) -> None:
        read = camera.read(self.config.loop)
        if read is None:
            camera.done = True
            return
        capture_ts_ns = time.time_ns()
        if camera.gate is not None and not camera.gate.wants(read[1], time.monotonic()):
            camera.gated += 1
            camera.held += 1
            self.stats.gated += 1
            self._next(camera)
            return
        data, width, height = self._encode(*read)
        frame = Frame(camera.camera_id, camera.next_seq, capture_ts_ns, width, height, data, skipped_before=camera.held)
        payload = pack_frame(frame)
        if len(payload) > self.config.max_frame_bytes:
            self._refuse(camera, f"{len(payload):,} bytes, over --max-frame-bytes {self.config.max_frame_bytes:,}")
        else:
            try:
                kafka_clients.send(
                    producer,
                    self.config.topic,
                    payload,
                    camera.camera_id.encode(),
                    on_delivery=self._on_delivery(camera, camera.next_seq),
                )
                camera.sent += 1
                camera.held = 0
                self.stats.sent += 1
                self.stats.bytes += len(payload)
            except KafkaException as exc:  # refused by the client at once: this frame only
                self._refuse(camera, str(exc.args[0]))
        self._next(camera)

    def _next(self, camera: Camera) -> None:
        """Past the frame just taken (sent, refused or held back): its sequence number is used, as a lost
        frame's would be, and the camera is due one period later."""
        camera.next_seq += 1
        taken = camera.sent + camera.refused + camera.gated
        if self.config.max_frames is not None and taken >= self.config.max_frames:
            camera.done = True
        camera.due += self.period
        if self.period and time.monotonic() - camera.due > max(self.period, 0.05):  # no pace, never late
            camera.late += 1
            camera.due = time.monotonic()

    def _encode(self, key: str | None, image: np.ndarray) -> tuple[bytes, int, int]:
        """JPEG of ``image``; a still image (keyed by its path) is encoded once for every camera and loop."""
        if key is None:
            return self.encoder.encode(image)
        if key not in self._encoded:
            encoded = self.encoder.encode(image)
            if len(self._encoded) >= ENCODED_CACHE_LIMIT:
                return encoded
            self._encoded[key] = encoded
        return self._encoded[key]

    def _refuse(self, camera: Camera, reason: str) -> None:
        """Count a frame that cannot be sent; say so for the camera's first and every 100th, not for each."""
        camera.refused += 1
        self.stats.refused += 1
        if logs.worth_saying(camera.refused):
            log.error(
                "camera %s: frame %d refused (%d so far): %s", camera.camera_id, camera.next_seq, camera.refused, reason
            )

    def _on_delivery(self, camera: Camera, seq: int):
        def delivered(err, _msg) -> None:
            if err is None:
                self.stats.acked += 1
                return
            camera.failed += 1
            self.stats.errors += 1
            if logs.worth_saying(camera.failed):
                log.error(
                    "camera %s: frame %d not delivered (%d so far): %s", camera.camera_id, seq, camera.failed, err
                )

        return delivered

    def _report(self, final: bool = False) -> None:
        line = self.stats.line(self.cameras)
        if sys.stderr.isatty() and not final:
            sys.stderr.write("\r" + line[:200].ljust(120))
            sys.stderr.flush()
        else:
            if sys.stderr.isatty():
                sys.stderr.write("\n")
            log.info("%s%s", "done: " if final else "", line)
