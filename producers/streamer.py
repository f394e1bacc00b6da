"""Paces several cameras in one process and publishes their frames, keyed by camera id.

One thread sends for every camera in order of its next due time (a heap), so N cameras at F fps cost
one loop, not N threads. The cameras start spread over one frame period, as independent cameras
run out of step. A file camera that falls behind does not burst to catch up: its schedule is reset
and the late frames are counted. A live camera's source is read by a thread of its own; when its
frame is due the sender takes the newest picture, or, when the source has nothing newer (it is down,
or slower than --fps), waits for the reader to say a picture came. With a motion gate, a frame of an
unchanged scene is held back (counted, its sequence number used) and the next frame sent says how
many were. Each camera's state goes to the status topic; metrics and health are served on request.
"""

import heapq
import logging
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from confluent_kafka import KafkaException, Producer
from prometheus_client import CollectorRegistry

from facestream import health, kafka_access, kafka_clients, kafka_topics, logs
from facestream.producers.camera import Camera
from facestream.producers.config import ProducerConfig
from facestream.producers.encoder import JpegEncoder
from facestream.producers.metrics import FrameAges, ProducerCollector
from facestream.producers.motion import MotionGate
from facestream.producers.placement import Placement
from facestream.producers.sources import open_source
from facestream.producers.status import StatusReporter
from facestream.redact import redact
from facestream.schemas import Frame, pack_frame
from facestream.service import Every
from facestream.signals import StopOnSignals

log = logging.getLogger(__name__)

ENCODED_CACHE_LIMIT = 256  # still images whose JPEG is kept
TICK_S = 0.25  # how often states are looked at (status records, readiness, sources given up)
CLOSE_S = 2.0  # the longest a stopping producer waits for its live streams to close


@dataclass
class StreamStats:
    sent: int = 0
    acked: int = 0
    bytes: int = 0
    errors: int = 0  # delivery errors
    refused: int = 0
    gated: int = 0  # held back by the motion gate
    ages: FrameAges = field(default_factory=FrameAges)
    started: float = field(default_factory=time.monotonic)

    def line(self, cameras: list[Camera]) -> str:
        elapsed = max(time.monotonic() - self.started, 1e-9)
        per_camera = " ".join(f"{c.camera_id}={c.sent}" + _troubles(c) + _live_state(c) for c in cameras)
        captured = self.sent + self.refused + self.gated
        gated = f", held back by the motion gate {self.gated} ({self.gated / captured:.0%})" if self.gated else ""
        return (
            f"sent {self.sent} frames ({self.sent / elapsed:.1f} fps), acked {self.acked}, "
            f"{self.bytes / 1e6:.1f} MB, delivery errors {self.errors}, refused {self.refused}{gated} | {per_camera}"
        )


def _live_state(camera: Camera) -> str:
    """A live camera's state when it is not simply streaming: ``[reconnecting, attempt 3: Connection refused]``."""
    live = camera.live_status()
    if live is None:
        return ""
    if live.state == "streaming":
        return " [keyframes only]" if live.keyframes_only else ""
    said = f"{camera.state()}, attempt {live.attempts + 1}" if live.state == "reconnecting" else camera.state()
    return f" [{said}: {live.error}]" if live.error else f" [{said}]"


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
        # One source object per distinct source (a file or image name that reads as nothing fails now,
        # before anything is sent; a live one may be down now and come up later): still images are then
        # read and kept once for all cameras, a live stream is read once for all.
        sources = {spec: open_source(spec, config.live()) for _, spec in cameras}
        self.cameras = [Camera(cid, sources[spec], first, redact(spec)) for cid, spec in cameras]
        if config.motion_gate:  # keyframes spread over one interval, as the first frames are over one period
            for i, camera in enumerate(self.cameras):
                phase = config.keyframe_s * i / len(self.cameras)
                camera.gate = MotionGate(config.motion_min_area, config.keyframe_s, phase)
        self.period = 1.0 / config.fps if config.fps > 0 else 0.0
        self.config = config
        self.encoder = JpegEncoder(config.jpeg_quality, config.max_width, config.frame_size)
        self.bootstrap = bootstrap or kafka_clients.bootstrap_servers()
        self.stats = StreamStats()
        self.status = StatusReporter(config.status_topic, config.status_interval_s)
        self.readiness = health.Readiness("camera_streaming")
        self._encoded: dict[str, tuple[bytes, int, int]] = {}
        self._ready: deque[int] = deque()  # live cameras a picture came for while they waited
        self._finished = False  # every camera done (looked at every TICK_S, not on every frame)
        self._wake = threading.Event()
        for index, camera in enumerate(self.cameras):
            if camera.live is not None:
                camera.live.listen(partial(self._picture_came, index))

    def run(self) -> StreamStats:
        kafka_clients.check_reachable(self.bootstrap)
        if self.config.placement is not None:
            self._place(Placement.read(self.config.placement))
        if self.config.motion_gate:
            log.info(
                "motion gate: a frame is sent when %.2g of it changed since the camera's last frame sent, "
                "and at least every %g s; the others are held back and counted",
                self.config.motion_min_area,
                self.config.keyframe_s,
            )
        if self.config.http_port:
            registry = CollectorRegistry()
            registry.register(ProducerCollector(self.cameras, self.stats.ages))
            health.serve(self.readiness, registry, self.config.http_port, self.config.http_host)
        for camera in self.cameras:
            if camera.live is not None:
                camera.live.start()
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
            live = [camera.live for camera in self.cameras if camera.live is not None]
            for camera in self.cameras:
                camera.done = True
            for source in live:
                source.stop()
            closing = time.monotonic() + CLOSE_S
            for source in live:  # streams closed properly when they close at once, never waited on long
                source.join(max(0.0, closing - time.monotonic()))
            self.status.tick(producer, self.cameras, force=True)  # stopped, ended or failed: published once more
            left = kafka_clients.flush(producer, self.config.frames_topic, 30.0)
            if left:
                self.stats.errors += left
                log.error("%d frames were not acknowledged by Kafka within 30 s", left)
            self._report(final=True)
        return self.stats

    def _place(self, placement: Placement) -> None:
        """Each camera's partition from the placement list (producers/placement.py); a camera the list
        does not name is placed by its key's hash, said here and in the metrics."""
        partitions = kafka_topics.partition_count(self.config.frames_topic, self.bootstrap)
        unplaced = []
        for camera in self.cameras:
            found = placement.partition(camera.camera_id, partitions)
            camera.partition = -1 if found is None else found
            if found is None:
                unplaced.append(camera.camera_id)
        log.info(
            "placement: %d of %d cameras placed over %d partitions of %s by %s",
            len(self.cameras) - len(unplaced),
            len(self.cameras),
            partitions,
            self.config.frames_topic,
            self.config.placement,
        )
        if unplaced:
            log.warning(
                "%s not in the placement list %s: their keys' hash places them, which may leave partitions "
                "uneven; add them at the list's end",
                ", ".join(unplaced),
                self.config.placement,
            )

    def _serve(self, producer: Producer, schedule: list[tuple[float, int]], stop: StopOnSignals) -> None:
        """Send each camera's frame when it is due, earliest first, until every camera is done."""
        report = Every(self.config.stats_interval_s, self._report, time.monotonic() + self.config.stats_interval_s)
        next_tick = 0.0
        while not stop.requested and not self._finished:
            self._wake.clear()
            while self._ready:  # live cameras that waited, and have a picture now
                index = self._ready.popleft()
                if self.cameras[index].waiting:
                    self.cameras[index].waiting = False
                    heapq.heappush(schedule, (self.cameras[index].due, index))
            now = time.monotonic()
            if now >= next_tick:
                next_tick = now + TICK_S
                self._tick(producer)
            if schedule and schedule[0][0] - self._slack(schedule[0][1]) <= now:
                _due, index = heapq.heappop(schedule)
                camera = self.cameras[index]
                if not camera.done:
                    self._send_one(producer, camera)
                if not camera.done and not camera.waiting:
                    heapq.heappush(schedule, (camera.due, index))
                producer.poll(0)
            else:
                wait = schedule[0][0] - self._slack(schedule[0][1]) - now if schedule else TICK_S
                self._wake.wait(min(wait, TICK_S))  # woken early by a picture for a waiting camera
                producer.poll(0)  # serve delivery reports
            report.tick(time.monotonic())

    def _picture_came(self, index: int) -> None:
        """On a live source's thread: wake the sender if this camera is waiting for a picture."""
        if self.cameras[index].waiting:
            self._ready.append(index)
            self._wake.set()

    def _slack(self, index: int) -> float:
        """How early a camera's frame may go: a live picture half a source interval early is on time."""
        live = self.cameras[index].live
        return 0.0 if live is None else live.slack_s

    def _tick(self, producer: Producer) -> None:
        """Cameras whose source gave up are done (all done: finished); states published; ready while a camera
        streams."""
        for camera in self.cameras:
            if camera.live is not None and camera.live.finished:
                camera.done = True
        self._finished = all(camera.done for camera in self.cameras)
        self.status.tick(producer, self.cameras)
        self.readiness.mark("camera_streaming", any(camera.state() == "streaming" for camera in self.cameras))

    def _send_one(self, producer: Producer, camera: Camera) -> None:
        if camera.live is not None:
            picture = camera.take()
            if picture is None:
                camera.waiting = True
                picture = camera.take()  # a picture may have come before the flag was up
                if picture is None:
                    return
                camera.waiting = False
            key, image, capture_ts_ns = None, picture.frame, picture.captured_ns
        else:
            read = camera.read(self.config.loop)
            if read is None:
                camera.done = camera.ended = True
                return
            (key, image), capture_ts_ns = read, time.time_ns()
        if camera.gate is not None and not camera.gate.wants(image, time.monotonic()):
            camera.gated += 1
            camera.held += 1
            self.stats.gated += 1
            self._next(camera)
            return
        data, width, height = self._encode(key, image)
        frame = Frame(camera.camera_id, camera.next_seq, capture_ts_ns, width, height, data, skipped_before=camera.held)
        payload = pack_frame(frame)
        if len(payload) > self.config.max_frame_bytes:
            self._refuse(camera, f"{len(payload):,} bytes, over --max-frame-bytes {self.config.max_frame_bytes:,}")
        else:
            try:
                kafka_clients.send(
                    producer,
                    self.config.frames_topic,
                    payload,
                    camera.camera_id.encode(),
                    on_delivery=self._on_delivery(camera, camera.next_seq),
                    partition=camera.partition,
                )
                camera.sent += 1
                camera.held = 0
                camera.last_frame_ts_ns = capture_ts_ns
                self.stats.sent += 1
                self.stats.bytes += len(payload)
                self.stats.ages.add((time.time_ns() - capture_ts_ns) / 1e9)
            except KafkaException as exc:  # refused by the client at once: this frame only
                self._refuse(camera, str(exc.args[0]))
        self._next(camera)

    def _next(self, camera: Camera) -> None:
        """Past the frame just taken (sent, refused or held back): its sequence number is used, as a lost
        frame's would be, and the camera is due one period later. A file camera that fell behind is
        late (counted) and goes on at once; a live one was only waiting for its source, and goes on
        one period from now."""
        camera.next_seq += 1
        taken = camera.sent + camera.refused + camera.gated
        if self.config.max_frames is not None and taken >= self.config.max_frames:
            camera.done = True
        camera.due += self.period
        now = time.monotonic()
        if self.period and now - camera.due > max(self.period, 0.05):  # no pace, never late
            if camera.live is not None:
                camera.due = now + self.period
            else:
                camera.late += 1
                camera.due = now

    def _encode(self, key: str | None, image: Any) -> tuple[bytes, int, int]:
        """JPEG of ``image`` (an ``av.VideoFrame``); a still image (keyed by its path) is encoded once
        for every camera and loop."""
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
            kafka_access.check_allowed(
                err, f"write {self.config.frames_topic}"
            )  # raised out of poll(): no camera can send
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
