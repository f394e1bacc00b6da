"""The producer's configuration: every option of ``facestream produce`` but the camera/source pairs,
with its default, type and check, in one place (``facestream.config``)."""

import sys
from dataclasses import dataclass

from facestream import kafka_clients
from facestream.config import check, command_line, parse_size, setting, show_size
from facestream.schemas import FRAMES_TOPIC


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
    topic: str = setting(FRAMES_TOPIC, "Topic to publish frames to.")
    max_frame_bytes: int = setting(
        kafka_clients.MAX_MESSAGE_BYTES - kafka_clients.RECORD_ROOM,
        "Refuse (and count, per camera) a frame whose record would be larger: Kafka would refuse it anyway.",
        minimum=1024,
        maximum=kafka_clients.MAX_MESSAGE_BYTES - kafka_clients.RECORD_ROOM,
    )
    start_seq: int | None = setting(
        None, "First frame_seq of every camera (default: the clock in µs, so restarts never reuse one).", minimum=0
    )
    stats_interval: float = setting(2.0, "Seconds between stats lines.", minimum=0.1)

    def __post_init__(self) -> None:
        check(self)


def producer_command(cameras: list[tuple[str, str]], config: ProducerConfig | None = None, **changes) -> list[str]:
    """The command that streams ``cameras`` ((id, source) pairs) with ``config`` (and ``changes``) in a
    child process: the one place a producer command line is built (demo, benchmarks)."""
    pairs = [arg for camera, source in cameras for arg in ("--camera", camera, "--source", str(source))]
    return [sys.executable, "-m", "facestream.producers", *command_line(config or ProducerConfig(), **changes), *pairs]
