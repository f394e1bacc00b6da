"""Each benchmark's settings, declared once: option name, default, help and check (``facestream.config``,
as the services declare theirs).

``python -m bench`` builds a benchmark's options from its class here (``options``), the benchmark
runs with an instance of it, and its result file records it (``settings_of``). They live apart from
the benchmarks, which import OpenCV, ONNX Runtime or PyTorch, so that ``--help`` stays quick.
"""

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import RESULTS
from facestream.config import check, parse_size, setting, show_size
from facestream.detector_service.config import PROVIDER_CHOICES

LIVE_MODES = ("pyav-all", "pyav-keyframes", "opencv-grab", "opencv-read")  # bench.live's decoding modes


class Checked:
    """A benchmark's settings, each checked against its declaration when made (a ConfigError names it)."""

    def __post_init__(self) -> None:
        check(self)


def _positive(text: str) -> int:
    number = int(text)
    if number < 1:
        raise ValueError(f"{number} is not >= 1")
    return number


def listed(
    default: str,
    help: str,
    item: Callable[[str], Any] = _positive,
    show_item: Callable[[Any], str] = str,
    empty: bool = False,
    metavar: str = "N,N,...",
) -> Any:
    """A comma-separated list (batches, sizes, names), given as text and kept as a tuple of ``item``s;
    with ``empty``, '' is a list of none (that part of the benchmark skipped)."""

    def parse(text: str) -> tuple:
        parts = [part.strip() for part in text.split(",") if part.strip()]
        if not parts and not empty:
            raise ValueError(f"expected a comma-separated list, e.g. {default}, got {text!r}")
        try:
            return tuple(item(part) for part in parts)
        except ValueError as exc:
            raise ValueError(f"expected a comma-separated list, e.g. {default}: {exc}") from None

    def show(values: tuple) -> str:
        return ",".join(show_item(value) for value in values)

    return setting(parse(default), help, parse=parse, show=show, metavar=metavar)


def size(default: str, help: str) -> Any:
    """A frame size, ``WIDTHxHEIGHT``, kept as (width, height)."""
    return setting(parse_size(default), help, parse=parse_size, show=show_size, metavar="WxH")


@dataclass(frozen=True)
class BacklogBenchConfig(Checked):
    """``bench backlog``: one CPU detector draining a backlog of frames on a real broker."""

    frames: int = setting(600, "Frames in the backlog (the sample photos, cycled).", minimum=2)
    batch: int = setting(8, "Frames per inference (poll size).", minimum=1)
    width: int = setting(640, "The producer scales frames to this width.", minimum=16)
    decode_threads: int = setting(2, "The detector's JPEG decoding threads.", minimum=1)
    ort_threads: int = setting(0, "ONNX Runtime's threads (0: its default).", minimum=0)
    runs: int = setting(3, "Timed runs; the median is reported.", minimum=1)
    out: Path = setting(RESULTS / "cpu_detector_backlog.json", "Result file.", metavar="FILE")


@dataclass(frozen=True)
class PoseBenchConfig(Checked):
    """``bench pose``: MoveNet through the service's processor on OpenCV's pedestrian video."""

    batch: tuple[int, ...] = listed("1,8", "Frames per batch, comma-separated.")
    frames: int = setting(795, "Frames of vtest.avi, from its start.", minimum=1, maximum=795)
    provider: str = setting("cpu", "Where MoveNet runs.", choices=PROVIDER_CHOICES)
    precision: str = setting(
        "fp32",
        "fp16: a float16 copy made as `facestream export fp16` makes it (MoveNet's decoding stays float32).",
        choices=("fp16", "fp32"),
    )
    decode_threads: int = setting(2, "JPEG decoding threads (when decoding on the CPU).", minimum=1)
    repeats: int = setting(3, "Timed repeats; the median is reported.", minimum=1)
    out: Path | None = setting(None, "Result file (default: bench/results/pose-movenet-[PRECISION-]PROVIDER.json).")

    @property
    def result_file(self) -> Path:
        precision = "" if self.precision == "fp32" else f"{self.precision}-"
        return self.out or RESULTS / f"pose-movenet-{precision}{self.provider}.json"


@dataclass(frozen=True)
class AlertStoreBenchConfig(Checked):
    """``bench alert-store``: a page of alerts out of a million, under filters, on SQLite and PostgreSQL."""

    alerts: int = setting(1_000_000, "Alerts in the database.", minimum=1000)
    repeats: int = setting(20, "Times each question is asked.", minimum=1)
    limit: int = setting(50, "Alerts per page.", minimum=1, maximum=200)
    engines: tuple[str, ...] = listed("sqlite,postgresql", "Databases to measure.", item=str, metavar="NAME,...")
    out: Path = setting(RESULTS / "alert-store-cpu.json", "Result file.", metavar="FILE")


@dataclass(frozen=True)
class ThresholdBenchConfig(Checked):
    """``bench threshold``: SFace similarities of one person and of two people on the sample photos."""

    provider: str = setting("cpu", "Where YuNet and SFace run.", choices=PROVIDER_CHOICES)
    out: Path = setting(RESULTS / "threshold-sface.json", "Result file.", metavar="FILE")


@dataclass(frozen=True)
class FallBenchConfig(Checked):
    """``bench fall``: from the first frame of a fall to its alert on the broker, live."""

    falls: int = setting(5, "Falls streamed, one after another.", minimum=1)
    fps: float = setting(5.0, "The camera's frame rate.", minimum=1)
    provider: str = setting("cpu", "Where MoveNet runs.", choices=PROVIDER_CHOICES)
    out: Path | None = setting(None, "Result file (default: bench/results/fall-latency-PROVIDER.json).")

    @property
    def result_file(self) -> Path:
        return self.out or RESULTS / f"fall-latency-{self.provider}.json"


@dataclass(frozen=True)
class SoakConfig(Checked):
    """``bench soak``: the CPU pipeline at a steady load; memory, descriptors and lag must stay flat."""

    cameras: int = setting(10, "Cameras streaming the sample photos.", minimum=1)
    fps: float = setting(
        2.0,
        "Frames per second per camera (this 2-core machine's detector, SFace on every face, manages ~30 in all).",
        minimum=0.1,
    )
    minutes: float = setting(60.0, "How long the load runs.", minimum=1)
    warm_up_s: float = setting(600.0, "Seconds before the checks start.", minimum=0)
    interval_s: float = setting(10.0, "Seconds between samples.", minimum=1)
    rss_band: float = setting(0.10, "Most memory may move after warm-up, as a fraction of its lowest.", minimum=0)
    frame_size: tuple[int, int] | None = size("320x240", "What every camera sends.")
    out: Path = setting(RESULTS / "soak-cpu.json", "Result file.", metavar="FILE")


@dataclass(frozen=True)
class AlertingBenchConfig(Checked):
    """``bench alerting``: events per second alerting workers drain from a backlog."""

    events: int = setting(60000, "Detection events in the backlog.", minimum=100)
    cameras: int = setting(100, "Cameras they come from, at 30 fps each.", minimum=1)
    faces: int = setting(2, "Faces per event: one enrolled, the rest not.", minimum=0)
    partitions: int = setting(4, "Partitions of the detections topic (the most workers that can share it).", minimum=1)
    workers: tuple[int, ...] = listed("1,2", "Alerting workers in the group, one run each.")
    runs: int = setting(3, "Runs per worker count; the median is reported.", minimum=1)
    out: Path = setting(RESULTS / "alerting-cpu.json", "Result file.", metavar="FILE")


@dataclass(frozen=True)
class LineBenchConfig(Checked):
    """``bench line``: the line rule's crossings on the pedestrian video against crossings counted by eye."""

    every: tuple[int, ...] = listed("1,2,4", "Camera rates: every n-th frame of the video.")
    input_sizes: tuple[tuple[int, int], ...] = listed(
        "256x192,512x384,768x576",
        "MoveNet's inputs, WxH (multiples of 32), comma-separated.",
        item=parse_size,
        show_item=show_size,
        metavar="WxH,...",
    )
    min_score: float = setting(0.2, "The line rule's min-score.", minimum=0, maximum=1)
    provider: str = setting("cpu", "Where MoveNet runs.", choices=PROVIDER_CHOICES)
    out: Path = setting(RESULTS / "line-vtest.json", "Result file.", metavar="FILE")


@dataclass(frozen=True)
class LiveBenchConfig(Checked):
    """``bench live``: decoding CPU per live camera by library and mode; cameras one producer core holds."""

    sizes: tuple[tuple[int, int], ...] = listed(
        "1280x720,1920x1080",
        "Stream sizes of the decoding part, comma-separated ('' skips it).",
        item=parse_size,
        show_item=show_size,
        empty=True,
        metavar="WxH,...",
    )
    modes: tuple[str, ...] = listed(",".join(LIVE_MODES), "Decoding modes to compare.", item=str, metavar="MODE,...")
    fps: float = setting(5.0, "Frames taken (sent) per second per camera.", minimum=0.1)
    seconds: float = setting(20.0, "Measured seconds of each run or step.", minimum=1)
    warm_up_s: float = setting(3.0, "Streaming before measuring.", minimum=0)
    repeats: int = setting(3, "Runs of each mode; the median is reported.", minimum=1)
    cameras: tuple[int, ...] = listed(
        "4,8,12,16,20,24,28,32",
        "Camera counts for one producer core, in order, until one does not hold ('' skips it).",
        empty=True,
    )
    camera_repeats: int = setting(1, "Runs of each camera count; all must hold.", minimum=1)
    camera_size: tuple[int, int] = size("1280x720", "Stream size of that part.")
    producer_core: int = setting(1, "The core the measured process is pinned to.", minimum=0)
    out: Path = setting(RESULTS / "live-cpu.json", "Result file.", metavar="FILE")


@dataclass(frozen=True)
class GateBenchConfig(Checked):
    """``bench gate``: the motion gate's share of frames sent and recall of faces."""

    min_area: tuple[float, ...] = listed(
        "0.0005,0.001,0.002,0.005,0.01,0.02,0.05",
        "--motion-min-area values to try, comma-separated.",
        item=float,
        show_item=lambda area: f"{area:g}",
        metavar="X,X,...",
    )
    keyframe_s: float = setting(5.0, "As for produce --keyframe-s.", minimum=0.1)
    quiet_s: float = setting(60.0, "Length of the quiet scene.", minimum=1)
    batch: int = setting(16, "Frames per inference of the detector (YuNet, CPU).", minimum=1)
    out: Path = setting(RESULTS / "gate-vtest-yunet-cpu.json", "Result file.", metavar="FILE")


@dataclass(frozen=True)
class KafkaBenchConfig(Checked):
    """``bench kafka``: the detector's Kafka plumbing against Kafka's own kafka-consumer-perf-test."""

    frames: int = setting(5000, "JPEG frames (640 px wide sample photos) per run.", minimum=1)
    batch: int = setting(64, "The detector's poll batch.", minimum=1)
    runs: int = setting(3, "Runs; the median ratio is reported.", minimum=1)
    out: Path = setting(RESULTS / "kafka-plumbing-cpu.json", "Result file.", metavar="FILE")
