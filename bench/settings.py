"""Each benchmark's settings, declared once: option name, default, help and check (``facestream.config``,
as the services declare theirs).

``python -m bench`` builds a benchmark's options from its class here (``options``), the benchmark
runs with an instance of it, and its result file records it (``settings_of``). They live apart from
the benchmarks, which import OpenCV, ONNX Runtime or PyTorch, so that ``--help`` stays quick.
"""

from dataclasses import dataclass
from pathlib import Path

from bench import RESULTS
from facestream.config import check, setting
from facestream.detector_service.config import PROVIDER_CHOICES


def parse_sizes(text: str) -> tuple[int, ...]:
    """``1,8,16,32`` -> (1, 8, 16, 32), each >= 1."""
    try:
        sizes = tuple(int(v) for v in text.split(","))
    except ValueError:
        raise ValueError(f"expected comma-separated sizes like 1,8,16,32, got {text!r}") from None
    if not sizes or min(sizes) < 1:
        raise ValueError(f"sizes must be >= 1, got {text!r}")
    return sizes


def show_sizes(sizes: tuple[int, ...]) -> str:
    return ",".join(map(str, sizes))


def sizes(default: str, help: str):
    """A comma-separated list of sizes (batches), given and recorded as a tuple."""
    return setting(parse_sizes(default), help, parse=parse_sizes, show=show_sizes, metavar="N,N,...")


@dataclass(frozen=True)
class BacklogBenchConfig:
    """``bench backlog``: one CPU detector draining a backlog of frames on a real broker."""

    frames: int = setting(600, "Frames in the backlog (the sample photos, cycled).", minimum=2)
    batch: int = setting(8, "Frames per inference (poll size).", minimum=1)
    width: int = setting(640, "The producer scales frames to this width.", minimum=16)
    decode_threads: int = setting(2, "The detector's JPEG decoding threads.", minimum=1)
    ort_threads: int = setting(0, "ONNX Runtime's threads (0: its default).", minimum=0)
    runs: int = setting(3, "Timed runs; the median is reported.", minimum=1)
    out: Path = setting(RESULTS / "cpu_detector_backlog.json", "Result file.", metavar="FILE")

    def __post_init__(self) -> None:
        check(self)


@dataclass(frozen=True)
class PoseBenchConfig:
    """``bench pose``: MoveNet through the service's processor on OpenCV's pedestrian video."""

    batch: tuple[int, ...] = sizes("1,8", "Frames per batch, comma-separated.")
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

    def __post_init__(self) -> None:
        check(self)

    @property
    def result_file(self) -> Path:
        precision = "" if self.precision == "fp32" else f"{self.precision}-"
        return self.out or RESULTS / f"pose-movenet-{precision}{self.provider}.json"
