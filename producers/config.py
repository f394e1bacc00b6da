"""The producer's configuration: every option of ``facestream produce`` but the camera/source pairs,
with its default, type and check, in one place (``facestream.config``)."""

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from facestream import kafka_clients
from facestream.config import (
    check,
    command_line,
    http_host_setting,
    http_port_setting,
    parse_size,
    setting,
    show_size,
    stats_interval_setting,
)
from facestream.errors import ConfigError
from facestream.producers.live import DECODE_CHOICES, TRANSPORT_CHOICES, LiveSettings
from facestream.schemas import CAMERA_STATUS_TOPIC, FRAMES_TOPIC


@dataclass(frozen=True)
class ProducerConfig:
    fps: float = setting(10.0, "Frames per second per camera (0: as fast as possible).", minimum=0)
    loop: bool = setting(False, "Start a file source again at its end.")
    max_frames: int | None = setting(
        None, "Stop each camera after N frames (sent, refused or held back by --motion-gate).", minimum=1
    )
    jpeg_quality: int = setting(85, "JPEG quality of the frames sent.", minimum=1, maximum=100)
    max_width: int = setting(1280, "Scale wider frames down (0: never).", minimum=0)
    frame_size: tuple[int, int] | None = setting(
        None,
        "Send every frame at exactly WIDTHxHEIGHT, scaled to cover it and centre-cropped, as a camera "
        "of that resolution would frame it (instead of --max-width).",
        parse=parse_size,
        show=show_size,
        metavar="WxH",
    )
    motion_gate: bool = setting(
        False,
        "Send a frame only when the scene changed since the camera's last frame sent (and a keyframe at least "
        "every --keyframe-s); the frames held back are counted and announced on the next frame (skipped_before).",
    )
    motion_min_area: float = setting(
        0.002,
        "With --motion-gate: the fraction of the frame that must change for it to be sent (on OpenCV's vtest.avi, "
        "a busy street, 0.002 kept every face; python -m bench gate measures others).",
        minimum=0.00001,
        maximum=1.0,
    )
    keyframe_s: float = setting(
        5.0, "With --motion-gate: send a frame at least this often however quiet the scene.", minimum=0.1
    )
    frames_topic: str = setting(FRAMES_TOPIC, "Topic to publish frames to.", was="topic")
    placement: Path | None = setting(
        None,
        "The deployment's camera ids, one per line: the camera on line i (from 0) goes to partition i mod the frames "
        "topic's partitions, so partitions carry equal numbers of cameras (without it, or for a camera not listed, "
        "the key's hash places it). Every producer of a deployment reads the same list; new cameras go at its end.",
    )
    max_frame_bytes: int = setting(
        kafka_clients.MAX_MESSAGE_BYTES - kafka_clients.RECORD_ROOM,
        "Refuse (and count, per camera) a frame whose record would be larger: Kafka would refuse it anyway.",
        minimum=1024,
        maximum=kafka_clients.MAX_MESSAGE_BYTES - kafka_clients.RECORD_ROOM,
    )
    start_seq: int | None = setting(
        None, "First frame_seq of every camera (default: the clock in µs, so restarts never reuse one).", minimum=0
    )
    stats_interval_s: float = stats_interval_setting(2.0)
    rtsp_transport: str = setting(
        "tcp", "Live RTSP sources: the transport (tcp loses nothing).", choices=TRANSPORT_CHOICES
    )
    live_decode: str = setting(
        "auto",
        "Live sources: decode every picture (all), only keyframes (keyframes), or only keyframes when they come "
        "at least as often as --fps asks (auto: about a fifth of the CPU).",
        choices=DECODE_CHOICES,
    )
    open_timeout_s: float = setting(
        10.0, "Live sources: give up opening one after this long, and try again.", minimum=0.1
    )
    stall_s: float = setting(
        5.0, "Live sources: a source that gives no picture for this long has stalled, and is opened again.", minimum=0.1
    )
    retry_min_s: float = setting(
        0.5, "Live sources: the first pause before trying a failed source again.", minimum=0.01
    )
    retry_max_s: float = setting(
        5.0, "Live sources: the longest pause between attempts (each pause doubles up to it).", minimum=0.01
    )
    max_attempts: int = setting(
        0, "Live sources: give a camera up after this many failed attempts in a row (0: never).", minimum=0
    )
    status_topic: str = setting(CAMERA_STATUS_TOPIC, "Topic each camera's state goes to (the offline alert reads it).")
    status_interval_s: float = setting(
        5.0,
        "Seconds within which each camera status record is followed by the next (a change of state is sent at once).",
        minimum=0.1,
    )
    http_port: int = http_port_setting("a camera streams", was="metrics_port")
    http_host: str = http_host_setting(was="metrics_host")

    def __post_init__(self) -> None:
        check(self)
        if self.retry_max_s < self.retry_min_s:
            raise ConfigError(f"--retry-max-s ({self.retry_max_s:g}) must be >= --retry-min-s ({self.retry_min_s:g})")

    def live(self) -> LiveSettings:
        """How this producer's live sources are read."""
        return LiveSettings(
            transport=self.rtsp_transport,
            open_timeout_s=self.open_timeout_s,
            stall_s=self.stall_s,
            retry_min_s=self.retry_min_s,
            retry_max_s=self.retry_max_s,
            max_attempts=self.max_attempts,
            decode=self.live_decode,
            fps=self.fps,
        )


def producer_command(
    cameras: Sequence[tuple[str, str | Path]], config: ProducerConfig | None = None, **changes
) -> list[str]:
    """The command that streams ``cameras`` ((id, source) pairs) with ``config`` (and ``changes``) in a
    child process: the one place a producer command line is built (demo, benchmarks)."""
    pairs = [arg for camera, source in cameras for arg in ("--camera", camera, "--source", str(source))]
    return [sys.executable, "-m", "facestream.producers", *command_line(config or ProducerConfig(), **changes), *pairs]
