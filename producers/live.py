"""A live camera: an RTSP or HTTP stream, or a local camera, read by a thread of its own.

The thread keeps up with the stream, decoding every picture as it comes and keeping only the newest,
so however slowly frames are sent, the one sent is as fresh as the stream allows (a reader that
decoded one picture per frame due fell further behind every second). Pictures stay in the
decoder's YUV: only the few that are sent are scaled and encoded (``encoder.JpegEncoder``). A
source that cannot be opened, drops or stalls (no picture for ``stall_s``) is opened again after a
pause that doubles from ``retry_min_s`` up to ``retry_max_s``, for ever unless ``max_attempts`` says
otherwise.

Decoded with PyAV (FFmpeg's libraries): against OpenCV's FFmpeg backend on the same 720p stream it
costs the same CPU decoding every picture, hands over frames 40 ms fresher, and can decode only the
keyframes when they come often enough for the rate sent (a fifth of the CPU), set the RTSP
transport per camera and time out a stalled read (``python -m bench live``; docs/performance.md).
"""

import logging
import random
import statistics
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from facestream.counters import counted
from facestream.redact import redact

log = logging.getLogger(__name__)

DECODE_CHOICES = ("auto", "all", "keyframes")
TRANSPORT_CHOICES = ("tcp", "udp")


@dataclass(frozen=True)
class LiveSettings:
    """How every live source of a producer is read (``ProducerConfig`` holds the user's values)."""

    transport: str = "tcp"  # RTSP over TCP: no losses to UDP, and no reordering buffer
    open_timeout_s: float = 10.0
    stall_s: float = 5.0
    retry_min_s: float = 0.5
    retry_max_s: float = 5.0
    max_attempts: int = 0  # failed attempts in a row before giving up; 0: never give up
    decode: str = "auto"  # all pictures, keyframes only, or keyframes only when they come often enough
    fps: float = 0.0  # the rate frames are sent at, for decode="auto" (0: as fast as possible)


@dataclass(frozen=True)
class Picture:
    """One decoded picture, as the decoder made it."""

    index: int  # per source, from 1
    captured_ns: int  # wall clock when it came out of the decoder
    frame: Any  # av.VideoFrame


@dataclass(frozen=True)
class LiveStatus:
    """A live source's state at one moment, for the stats line, the metrics and the status records."""

    state: str  # connecting, streaming, reconnecting, failed or stopped (CAMERA_STATES)
    attempts: int  # failed attempts since the last picture
    failures: int = field(
        metadata=counted("", "facestream_producer_source_failures", "Failed attempts to open or read a live source")
    )
    error: str | None  # the last failure, credentials masked
    decoded: int = field(
        metadata=counted("", "facestream_producer_pictures_decoded", "Pictures a live source decoded and handed over")
    )
    undecodable: int = field(
        metadata=counted("", "facestream_producer_packets_undecodable", "Packets a live source's decoder refused")
    )
    backlog: int = field(
        metadata=counted(
            "",
            "facestream_producer_pictures_backlog",
            "Pictures of the burst a live source sends on (re)connecting: decoded, dropped as old",
        )
    )
    resolution_changes: int = field(
        metadata=counted("", "facestream_producer_resolution_changes", "Times a live source changed resolution")
    )
    keyframes_only: bool
    size: tuple[int, int] | None


class LiveSource:
    """Reads one live source on a thread of its own; ``newest`` hands the latest picture to the sender."""

    def __init__(self, spec: str, settings: LiveSettings) -> None:
        self.spec = spec
        self.name = redact(spec)  # the only form of the source that reaches a log, a metric or a record
        self.settings = settings
        self._url, self._format, self._options = _open_arguments(spec, settings.transport)
        self._listeners: list[Callable[[], None]] = []
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"live {self.name}", daemon=True)
        self._newest: Picture | None = None
        self._state = "connecting"
        self._error: str | None = None
        self._attempts = self._failures = self._decoded = self._undecodable = self._resized = self._backlog = 0
        self._size: tuple[int, int] | None = None
        self._keyframes: deque[float] = deque(maxlen=5)  # when the last keyframes came (monotonic)
        self._keyframes_only = settings.decode == "keyframes"
        self._interval_s = 0.04  # between pictures decoded, smoothed; a 25 fps guess until measured
        self._last_picture = 0.0

    def start(self) -> "LiveSource":
        if not self._thread.is_alive():
            self._thread.start()
        return self

    def stop(self) -> None:
        """Ask the reader to stop; it closes the stream at its next picture (a blocked read gives up
        within ``stall_s``; the thread is a daemon, and never holds a process up)."""
        self._stopping.set()

    def join(self, timeout_s: float) -> None:
        if self._thread.is_alive():
            self._thread.join(timeout=timeout_s)

    def listen(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` (on the reader's thread) for every new picture."""
        self._listeners.append(callback)

    def newest(self, after: int = 0) -> Picture | None:
        """The newest picture, if it is newer than picture number ``after``."""
        picture = self._newest
        return picture if picture is not None and picture.index > after else None

    @property
    def slack_s(self) -> float:
        """Half the time between pictures: a picture this early for a frame due is as good as one on time."""
        return self._interval_s / 2

    @property
    def finished(self) -> bool:
        """True once the reader gave up (``max_attempts``) or was stopped."""
        return self._state in ("failed", "stopped")

    def status(self) -> LiveStatus:
        return LiveStatus(
            self._state,
            self._attempts,
            self._failures,
            self._error,
            self._decoded,
            self._undecodable,
            self._backlog,
            self._resized,
            self._keyframes_only,
            self._size,
        )

    def _run(self) -> None:
        while not self._stopping.is_set():
            why = self._read()
            if self._stopping.is_set():
                break
            self._attempts += 1
            self._failures += 1
            said, self._error = self._error, redact(why)
            if self.settings.max_attempts and self._attempts >= self.settings.max_attempts:
                self._state = "failed"
                log.error("source %s: giving up after %d failed attempts: %s", self.name, self._attempts, self._error)
                return
            pause = min(self.settings.retry_max_s, self.settings.retry_min_s * 2 ** (self._attempts - 1))
            pause *= random.uniform(0.8, 1.0)  # cameras that dropped together do not all knock at once
            self._state = "reconnecting"
            if self._attempts <= 3 or self._attempts % 20 == 0 or said != self._error:  # not every 5 s for ever
                log.warning(
                    "source %s: %s; trying again in %.1f s (attempt %d)",
                    self.name,
                    self._error,
                    pause,
                    self._attempts + 1,
                )
            self._stopping.wait(pause)
        self._state = "stopped"

    def _read(self) -> str:
        """Open the source and decode it until it fails; return why it stopped (empty when asked to)."""
        import av

        opened = time.monotonic()
        try:
            container = av.open(
                self._url,
                format=self._format,
                options=self._options,
                timeout=(self.settings.open_timeout_s, self.settings.stall_s),
            )
        except av.FFmpegError as exc:
            return _described(
                exc, time.monotonic() - opened, self.settings.open_timeout_s, "no answer within {} s (timed out)"
            )
        except OSError as exc:  # e.g. a local camera that is not there
            return exc.strerror or str(exc)
        try:
            if not container.streams.video:
                return "the source has no video stream"
            stream = container.streams.video[0]
            stream.thread_type = "SLICE"  # frame threads would each hold a picture back
            # What the server or the network held back comes in a burst on opening: its pictures are
            # decoded but not handed over until packets come at the stream's pace (a gap of half a
            # frame interval), so the first frame sent after a (re)connection is a fresh one too.
            catch_up_s = min(0.5, max(0.005, 0.5 / float(stream.average_rate or 25)))
            self._last_picture = last_packet = time.monotonic()
            self._keyframes.clear()  # intervals across a reconnection mean nothing
            backlog = True
            for packet in container.demux(stream):
                if self._stopping.is_set():
                    return ""
                now = time.monotonic()
                backlog = backlog and now - last_packet < catch_up_s
                last_packet = now
                if packet.is_keyframe and packet.size and not backlog:  # a burst's keyframes come too close
                    self._keyframe_came(now)
                if not self._keyframes_only or packet.is_keyframe or not packet.size:
                    self._decode(packet, publish=not backlog)
                if time.monotonic() - self._last_picture > self.settings.stall_s:
                    return f"no picture for {self.settings.stall_s:g} s (stalled)"
            return "the stream ended"
        except av.FFmpegError as exc:
            return _described(
                exc, time.monotonic() - self._last_picture, self.settings.stall_s, "no data for {} s (stalled)"
            )
        finally:
            container.close()

    def _decode(self, packet, publish: bool) -> None:
        import av

        try:
            frames = packet.decode()
        except av.FFmpegError as exc:  # a damaged packet: counted; a stream that stays damaged stalls
            self._undecodable += 1
            if self._undecodable == 1 or self._undecodable % 100 == 0:
                log.warning(
                    "source %s: a packet could not be decoded (%d so far): %s",
                    self.name,
                    self._undecodable,
                    exc.strerror,
                )
            return
        for frame in frames:
            if publish:
                self._publish(frame)
            else:
                self._last_picture = time.monotonic()
                self._backlog += 1

    def _publish(self, frame) -> None:
        now = time.monotonic()
        size = (frame.width, frame.height)
        if self._size is not None and size != self._size:
            self._resized += 1
            log.warning("source %s: resolution changed from %dx%d to %dx%d", self.name, *self._size, *size)
        self._size = size
        if self._decoded and not self._keyframes_only:
            self._interval_s += 0.1 * (min(now - self._last_picture, 1.0) - self._interval_s)
        self._last_picture = now
        self._decoded += 1
        self._newest = Picture(self._decoded, time.time_ns(), frame)
        if self._state != "streaming":
            log.info("source %s: streaming %dx%d", self.name, *size)
            self._state, self._attempts = "streaming", 0
        for listener in self._listeners:
            listener()

    def _keyframe_came(self, now: float) -> None:
        """Track how often keyframes come; with decode="auto", decode only them when they come at least
        as often as frames are sent (and well within ``stall_s``), else every picture."""
        self._keyframes.append(now)
        if self.settings.decode != "auto" or len(self._keyframes) < 3:
            return
        interval = statistics.median(b - a for a, b in zip(self._keyframes, list(self._keyframes)[1:]))
        fps = self.settings.fps
        enough = fps > 0 and interval <= 1.05 / fps and interval <= self.settings.stall_s / 2
        if enough != self._keyframes_only:
            self._keyframes_only = enough
            log.info(
                "source %s: a keyframe every %.2f s; decoding %s",
                self.name,
                interval,
                "keyframes only" if enough else "every picture",
            )
        if enough:
            self._interval_s = interval


def _open_arguments(spec: str, transport: str) -> tuple[str, str | None, dict[str, str]]:
    """(url, FFmpeg format, options) for av.open: a camera index is Video4Linux's ``/dev/videoN``."""
    if spec.isdigit():
        return f"/dev/video{spec}", "v4l2", {}
    options = {"rtsp_transport": transport} if spec.lower().startswith(("rtsp://", "rtsps://")) else {}
    return spec, None, options


def _described(exc: Exception, waited_s: float, limit_s: float, silence: str) -> str:
    """FFmpeg's error in words, without the URL it quotes; a call it interrupted after ``limit_s`` of
    silence as ``silence`` (FFmpeg then reports the interruption, or what it made of the half-read data)."""
    if waited_s >= limit_s * 0.95:
        return silence.format(f"{limit_s:g}")
    return getattr(exc, "strerror", None) or redact(str(exc))
