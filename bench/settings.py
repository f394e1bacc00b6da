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
from facestream.config import check, parse_size, repeated, setting, show_size
from facestream.detector_service.config import DECODE_CHOICES, EMBEDDER_CHOICES
from facestream.detector_service.decoding.gpu_decode_settings import DEFAULT_GPU_DECODER
from facestream.detector_service.inference.runtime import PROVIDER_CHOICES, parse_chain
from facestream.detector_service.tracks import Policy
from facestream.errors import ConfigError

LIVE_MODES = ("pyav-all", "pyav-keyframes", "opencv-grab", "opencv-read")  # bench.live's decoding modes


class Checked:
    """A benchmark's settings, each checked against its declaration when made (a ConfigError names it)."""

    def __post_init__(self) -> None:
        check(self)


class TimedInBatches(Checked):
    """Settings of a benchmark that times whole batches of ``batch`` out of ``frames`` (a partial last
    batch is left out, so every timed batch is alike): at least one must fit."""

    frames: int
    batch: int

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.frames < self.batch:
            raise ConfigError(f"--frames ({self.frames}) must hold at least one --batch ({self.batch})")


def _on_off(text: str) -> str:
    if text not in ("on", "off"):
        raise ValueError(f"{text!r} is not on or off")
    return text


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
    option: str | None = None,
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

    return setting(parse(default), help, parse=parse, show=show, metavar=metavar, option=option)


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
class TracksBenchConfig(Checked):
    """``bench tracks``: the face tracker against ground truth on made-up footage of real faces."""

    fps: tuple[float, ...] = listed(
        "5,10,30", "Frame rates to stream each camera at, comma-separated.", item=float, show_item=lambda f: f"{f:g}"
    )
    provider: str = setting("cpu", "Where YuNet and SFace run.", choices=PROVIDER_CHOICES)
    batch: int = setting(16, "Frames per inference of the detector.", minimum=1)
    out: Path = setting(RESULTS / "tracks-faces.json", "Result file.", metavar="FILE")


@dataclass(frozen=True)
class SearchBenchConfig(Checked):
    """``bench search``: nearest-neighbour libraries against exact search over made-up sightings."""

    sightings: int = setting(1_000_000, "Sightings in the index.", minimum=1000)
    people: int = setting(20_000, "People they are of (each seen sightings / people times).", minimum=1)
    ndim: int = setting(128, "Values per face vector (SFace's 128).", minimum=2)
    queries: int = setting(200, "Faces searched for.", minimum=1)
    min_similarity: float = setting(0.5, "Cosine similarity a sighting needs to be found.", minimum=-1, maximum=1)
    limit: int = setting(1000, "Most sightings one search returns.", minimum=1)
    add_batch: int = setting(1000, "Sightings added to the index at a time.", minimum=1)
    checkpoints: tuple[int, ...] = listed(
        "250000,500000", "Index sizes at which the queries are also timed while adding (its growth).", empty=True
    )
    real_faces: bool = setting(
        True,
        "Also search the sample photos' faces and their transformed views (YuNet and SFace on the CPU) "
        "among the made-up sightings.",
        off="no-real-faces",
    )
    connectivity: int = setting(16, "HNSW links per vector (M).", minimum=2)
    expansion_add: int = setting(128, "HNSW candidates while adding (efConstruction).", minimum=1)
    expansion_search: int = setting(64, "HNSW candidates while searching (efSearch).", minimum=1)
    libraries: tuple[str, ...] = listed("usearch,faiss", "Libraries to measure.", item=str, metavar="NAME,...")
    store_sightings: int = setting(100_000, "Sightings the alert store keeps, for its rate.", minimum=2)
    batch: int = setting(500, "Detection events per store transaction (the store's --batch).", minimum=1)
    engines: tuple[str, ...] = listed(
        "sqlite,postgresql", "Databases the store keeps sightings in.", item=str, empty=True, metavar="NAME,..."
    )
    out: Path = setting(RESULTS / "search-index-cpu.json", "Result file.", metavar="FILE")


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
    minutes: float = setting(
        60.0, "How long the load runs (under a minute only checks that every part runs and is sampled).", minimum=0.25
    )
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
    face_tracks: tuple[str, ...] = listed(
        "on,off",
        "Face tracks on, off or both (both: what following faces costs, side by side in one run).",
        item=_on_off,
        metavar="on,off",
    )
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


PRECISIONS = ("fp16", "fp32")
BASELINES = ("eager", "compile", "autotune")  # bench.engine.TORCH_MODES: PyTorch eager, torch.compile's modes


def _baselines(text: str) -> tuple[str, ...]:
    """``eager,compile`` -> the PyTorch baselines named; ``none`` -> none."""
    chosen = tuple(b.strip() for b in text.split(",") if b.strip() and b.strip() != "none")
    unknown = sorted(set(chosen) - set(BASELINES))
    if unknown:
        raise ValueError(f"unknown baselines {', '.join(unknown)}; known: {', '.join(BASELINES)} or none")
    return chosen


def _key_value(text: str) -> tuple[str, str]:
    key, equals, value = text.partition("=")
    if not (key and equals and value):
        raise ValueError(f"expected KEY=VALUE, got {text!r}")
    return key, value


def _cores(text: str) -> tuple[int, ...]:
    """``12-15`` or ``0,2,4`` (or both, comma-separated) -> the core numbers; '' -> ()."""
    cores: list[int] = []
    try:
        for part in filter(None, text.split(",")):
            first, _, last = part.partition("-")
            cores += range(int(first), int(last or first) + 1)
    except ValueError:
        raise ValueError(f"expected cores like 12-15 or 0,2,4, got {text!r}") from None
    return tuple(cores)


def _model_name(model: str) -> str:
    """How a model appears in result file names: its name, or the stem of its file."""
    return Path(model).stem if model.endswith(".onnx") else model


def _frame_size(help: str) -> Any:
    """An optional frame size, ``WIDTHxHEIGHT``; None: the sample photos at their own aspect."""
    return setting(None, help, parse=parse_size, show=show_size, metavar="WxH")


FRAME_SIZE_HELP = (
    "Frames of exactly WIDTHxHEIGHT (the photos scaled to cover it, centre-cropped), as a camera of that "
    "resolution sends; default: the photos at 640 px wide, their own aspect."
)
MERGE_HEADS_HELP = (
    "MogFace: export its two prediction heads as one (exact; what `facestream export` does), "
    "or as two (the official layout; the PyTorch baselines keep it either way)."
)


@dataclass(frozen=True)
class EngineBenchConfig(Checked):
    """``bench engine``: the engine's ms/image per batch, with PyTorch eager and torch.compile beside it."""

    model: str = setting("mogface", "mogface, mogface_e (random weights, exported here), yunet or a path.")
    batches: tuple[int, ...] = listed("1,8,16,32", "Batch sizes, comma-separated.", option="--batch")
    precision: str = setting("fp16", "Precision of the exported model.", choices=PRECISIONS)
    provider: str = setting("cuda", "Where the engine runs.", choices=PROVIDER_CHOICES)
    height: int = setting(480, "Input height.", minimum=16)
    width: int = setting(640, "Input width.", minimum=16)
    iters: int = setting(20, "Inferences per timed repeat.", minimum=1)
    repeats: int = setting(5, "Timed repeats; the median is reported.", minimum=1)
    baselines: tuple[str, ...] = setting(
        ("eager", "compile"),
        "PyTorch baselines: eager, compile (default mode), autotune (max-autotune, slow to build), or none.",
        parse=_baselines,
        show=lambda names: ",".join(names) or "none",
        metavar="NAME,...",
    )
    cuda_options: tuple[tuple[str, str], ...] = repeated(
        "A CUDA provider option over the engine's defaults, KEY=VALUE (repeatable).",
        parse=_key_value,
        show="=".join,
        metavar="KEY=VALUE",
        option="--cuda-option",
    )
    merge_heads: bool = setting(True, MERGE_HEADS_HELP, off="separate-heads")
    torch_engine: str = setting(
        "off",
        "MogFace: also time the project's PyTorch engine, built here from the same weights (one build per "
        "batch): quick (Inductor's defaults, batch norms folded, CUDA graphs), autotune (also times Triton "
        "kernels, much longer) or off.",
        choices=("off", "quick", "autotune"),
    )
    out: Path | None = setting(
        None, "Result file (default: bench/results/engine-MODEL-PRECISION-PROVIDER[-OPTIONS].json).", metavar="FILE"
    )

    @property
    def result_file(self) -> Path:
        # A variant never overwrites the main file.
        variant = "-separate-heads" * (not self.merge_heads) + "".join(f"-{k}-{v}" for k, v in self.cuda_options)
        return self.out or RESULTS / f"engine-{_model_name(self.model)}-{self.precision}-{self.provider}{variant}.json"


@dataclass(frozen=True)
class ProfileBenchConfig(Checked):
    """``bench profile``: per-operator time of the exported and the rewritten graph at one batch."""

    model: str = setting("mogface", "mogface, mogface_e, yunet or a path.")
    batch: int = setting(16, "Images per run.", minimum=1)
    precision: str = setting("fp16", "Precision of the exported model.", choices=PRECISIONS)
    provider: str = setting("cuda", "Where the graphs run.", choices=("cuda", "cpu"))
    height: int = setting(480, "Input height.", minimum=16)
    width: int = setting(640, "Input width.", minimum=16)
    merge_heads: bool = setting(True, MERGE_HEADS_HELP, off="separate-heads")
    out: Path | None = setting(
        None,
        "Result file (default: bench/results/profile-MODEL-PRECISION-PROVIDER[-separate-heads][-bN].json, "
        "-bN unless the batch is 16).",
        metavar="FILE",
    )

    def as_engine(self) -> EngineBenchConfig:
        """The engine benchmark's settings for this one batch (the profile shares its model export)."""
        variant = "-separate-heads" * (not self.merge_heads) + ("" if self.batch == 16 else f"-b{self.batch}")
        name = f"profile-{_model_name(self.model)}-{self.precision}-{self.provider}{variant}.json"
        return EngineBenchConfig(
            model=self.model,
            batches=(self.batch,),
            precision=self.precision,
            provider=self.provider,
            height=self.height,
            width=self.width,
            baselines=(),
            merge_heads=self.merge_heads,
            out=self.out or RESULTS / name,
        )


@dataclass(frozen=True)
class PipelineBenchConfig(TimedInBatches):
    """``bench pipeline``: JPEG bytes in memory to serialised events, against the engine alone."""

    model: str = setting("mogface", "mogface, mogface_e, yunet or a path.")
    batch: int = setting(16, "Frames per batch.", minimum=1)
    frames: int = setting(512, "JPEG frames per repeat (the sample photos, cycled).", minimum=1)
    precision: str = setting("fp16", "Precision of the exported model.", choices=PRECISIONS)
    provider: str = setting("cuda", "Where the engine runs.", choices=PROVIDER_CHOICES)
    height: int = setting(480, "Input height.", minimum=16)
    width: int = setting(640, "Input width.", minimum=16)
    decode: str = setting("auto", "Where JPEGs are decoded, as for detect.", choices=DECODE_CHOICES)
    decode_threads: int = setting(8, "JPEG decoding threads (when decoding on the CPU).", minimum=1)
    gpu_decoder: str = setting(DEFAULT_GPU_DECODER, "nvImageCodec's set-up, as for detect (e.g. all/t4).")
    workers: int = setting(
        1, "Detector processes sharing the device (replicas), each taking every n-th batch.", minimum=1
    )
    fronts: int = setting(
        0,
        "One GPU owner process (decoder, engine, embedder) answering this many front processes, each "
        "taking every n-th batch and building its events (0: the processor in one process, or --workers).",
        minimum=0,
    )
    owner_batch: int = setting(
        0, "With --fronts: the owner's largest run, merging the fronts' batches of --batch (0: --batch).", minimum=0
    )
    switch_interval_ms: float | None = setting(
        None,
        "Python's thread switch interval in each detector process (default: Python's, 5 ms). nvImageCodec "
        "gives the interpreter up and takes it back twice per image; a shorter interval bounds its wait "
        "while the event-building thread holds it.",
        minimum=0.01,
    )
    embedder: str = setting("none", "As for detect.", choices=EMBEDDER_CHOICES)
    frame_size: tuple[int, int] | None = _frame_size(FRAME_SIZE_HELP)
    repeats: int = setting(3, "Timed repeats; the median is reported.", minimum=1)
    out: Path | None = setting(None, "Result file (default: named after the settings).", metavar="FILE")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.fronts and self.workers > 1:
            raise ConfigError("--fronts and --workers are two designs: pick one")

    @property
    def result_file(self) -> Path:
        parts = [
            f"pipeline-{_model_name(self.model)}-{self.precision}-{self.provider}",
            f"-{self.workers}-workers" if self.workers > 1 else "",
            f"-owner-{self.fronts}-fronts" if self.fronts else "",
            f"-owner-batch-{self.owner_batch}" if self.owner_batch else "",
            "" if self.gpu_decoder == DEFAULT_GPU_DECODER else "-" + self.gpu_decoder.replace("/", "-"),
            "" if self.switch_interval_ms is None else f"-switch-{self.switch_interval_ms:g}ms",
            "" if self.embedder == "none" else f"-{self.embedder}",
            "" if self.frame_size is None else "-" + show_size(self.frame_size),
        ]
        return self.out or RESULTS / ("".join(parts) + ".json")


@dataclass(frozen=True)
class DecodeBenchConfig(TimedInBatches):
    """``bench decode``: JPEG decoding alone, the CPU pool and nvImageCodec set-ups side by side."""

    frames: int = setting(4096, "JPEG frames per repeat (the sample photos, 640 px wide).", minimum=1)
    batch: int = setting(256, "Frames per decoding call.", minimum=1)
    height: int = setting(480, "Output height.", minimum=16)
    width: int = setting(640, "Output width.", minimum=16)
    frame_size: tuple[int, int] | None = _frame_size(FRAME_SIZE_HELP)
    variants: tuple[str, ...] = listed(
        "all,hw,gpu,all/keep,hw/keep,all/t4",
        "GPU decoder set-ups: backends all|hw|gpu|hybrid, then /keep (reuse Images), /tN (N host threads), "
        "/cN (N images per nvImageCodec call); '' measures the CPU pool alone.",
        item=str,
        empty=True,
        metavar="SETUP,...",
    )
    cpu_threads: int = setting(16, "Threads of the CPU decoder, measured first.", minimum=1)
    repeats: int = setting(3, "Timed repeats; the median is reported.", minimum=1)
    load: bool = setting(True, "Also time each decoder while YuNet keeps the GPU busy.", off="no-load")
    python_load: float = setting(
        0.0,
        "Also time each decoder while a thread of its process runs Python this share of the time (0: not).",
        minimum=0,
        maximum=0.95,
    )
    out: Path = setting(RESULTS / "decode-jpeg.json", "Result file.", metavar="FILE")


@dataclass(frozen=True)
class EmbeddingBenchConfig(Checked):
    """``bench embedding``: the embedder alone, and the pipeline's frames/s with and without it."""

    model: str = setting("yunet", "The detector: yunet, mogface (random weights, exported here) or a path.")
    embedder: str = setting("sface", "The embedder.", choices=tuple(e for e in EMBEDDER_CHOICES if e != "none"))
    batch: int = setting(256, "Frames per detector batch.", minimum=1)
    cameras: int = setting(0, "Cameras whose frames take turns in the batches (0: --batch).", minimum=0)
    fps: float = setting(30.0, "Each camera's frames per second (capture time: how soon a track is due).", minimum=0.1)
    embed_refresh_s: float = setting(2.0, "As for detect; a repeat is this much of the cameras' time.", minimum=0.01)
    embed_better_by: float = setting(0.15, "As for detect.", minimum=0, maximum=1)
    faces: tuple[int, ...] = listed("1,2,4,6", "Faces per frame, one comparison each.")
    precision: str = setting("fp16", "Precision of the exported models.", choices=PRECISIONS)
    provider: str = setting("cuda", "Where the models run.", choices=PROVIDER_CHOICES)
    height: int = setting(480, "Input height.", minimum=16)
    width: int = setting(640, "Input width.", minimum=16)
    decode: str = setting("auto", "Where JPEGs are decoded, as for detect.", choices=DECODE_CHOICES)
    decode_threads: int = setting(8, "JPEG decoding threads (when decoding on the CPU).", minimum=1)
    gpu_decoder: str = setting(DEFAULT_GPU_DECODER, "nvImageCodec's set-up, as for detect.")
    repeats: int = setting(3, "Timed repeats; the median is reported.", minimum=1)
    out: Path | None = setting(
        None, "Result file (default: bench/results/embedding-EMBEDDER-MODEL-PRECISION-PROVIDER.json).", metavar="FILE"
    )

    @property
    def policy(self) -> Policy:
        return Policy(self.embed_refresh_s, self.embed_better_by)

    @property
    def result_file(self) -> Path:
        name = f"embedding-{self.embedder}-{_model_name(self.model)}-{self.precision}-{self.provider}.json"
        return self.out or RESULTS / name


@dataclass(frozen=True)
class E2EConfig(Checked):
    """``bench e2e``: producers, Kafka, detector replicas, events: how many cameras stay under the limit."""

    model: str = setting("yunet", "A model name or .onnx file, as for detect.")
    cameras: tuple[int, ...] = listed("1,2,4,8", "Camera counts to try, in order.")
    fps: float = setting(30.0, "Frames per second per camera.", minimum=0.1)
    duration_s: float = setting(20.0, "Seconds of streaming per camera count.", minimum=1, option="--duration")
    replicas: int = setting(1, "Detector processes in the consumer group.", minimum=1)
    fronts: int = setting(
        1,
        "Kafka-facing processes per replica around one GPU owner (detect --fronts); members: replicas x fronts.",
        minimum=1,
    )
    gpus: int = setting(
        1, "GPUs to spread the replicas over: replica i runs on detect --device i % N (one replica per GPU).", minimum=1
    )
    batch: int = setting(8, "Frames per inference (poll size).", minimum=1)
    max_wait_ms: float = setting(20.0, "The detector's longest wait to fill a batch.", minimum=0)
    provider: str = setting(
        "auto",
        "Where the detector runs, as for detect (e.g. cuda, or torch,cuda for MogFace).",
        parse=parse_chain,
        metavar="CHAIN",
    )
    torch_seed: int = setting(
        0,
        "--provider torch with --allow-random-weights: the seed the model file was exported with (its build).",
        minimum=0,
    )
    latency_limit_ms: float = setting(200.0, "Stop once p99 capture-to-event passes this.", minimum=1)
    allow_random_weights: bool = setting(False, "Pass through to detect (random-init benchmark files).")
    cameras_per_producer: int = setting(
        50, "Cameras paced by one producer process (more cameras, more processes).", minimum=1
    )
    frame_size: tuple[int, int] | None = _frame_size(FRAME_SIZE_HELP)
    producer_cpus: tuple[int, ...] = setting(
        (),
        "Pin the producer processes to these cores (e.g. 12-15) and the broker, detectors and reader to the "
        "others; default: no pinning.",
        parse=_cores,
        show=lambda cores: ",".join(map(str, cores)),
        metavar="CORES",
    )
    source: str | None = setting(
        None, "Every camera streams this source (e.g. a video file; as for produce); default: --footage."
    )
    footage: str = setting(
        "photos",
        "Without --source: photos, each camera a folder of the sample photos, a different one each frame; or "
        "stills, each camera one of them in every frame (people standing in view: faces that keep their tracks).",
        choices=("photos", "stills"),
    )
    extra_produce_args: tuple[str, ...] = repeated(
        "More options for produce, e.g. --produce-arg=--motion-gate.", option="--produce-arg"
    )
    warm_up_s: float = setting(
        0.0,
        "Stream the first camera count this long before measuring (reported apart): a fresh broker runs cold.",
        minimum=0,
    )
    partitions: int = setting(
        0, "Partitions of the run's frames and detections topics (0: four per group member, at least 8).", minimum=0
    )
    placement: str = setting(
        "list",
        "How the producers place cameras on the frames' partitions: list (a placement list of each step's cameras, "
        "as produce --placement: partitions even) or hash (each key's hash, Kafka's default).",
        choices=("list", "hash"),
    )
    every_count: bool = setting(False, "Measure every camera count, also past the first over the limit.")
    profile_s: float = setting(
        0.0,
        "Sample every replica with py-spy for this many seconds in each step (needs py-spy; 0: never).",
        minimum=0,
    )
    extra_detect_args: tuple[str, ...] = repeated(
        "More options for detect, e.g. --detect-arg=--decode=gpu.", option="--detect-arg"
    )
    out: Path | None = setting(
        None, "Result file (default: bench/results/e2e-MODEL-PROVIDER-rREPLICAS.json).", metavar="FILE"
    )

    @property
    def detect_args(self) -> tuple[str, ...]:
        """What each detector's command line gets beyond the benchmark's own options."""
        return (*self.extra_detect_args, *(("--allow-random-weights",) if self.allow_random_weights else ()))


@dataclass(frozen=True)
class ClipBenchConfig(Checked):
    """``bench clip``: an alert's clip made from its frames in Kafka, as the review page asks for it."""

    seconds: float = setting(20.0, "Length of the alert (its frames in Kafka).", minimum=1)
    fps: tuple[float, ...] = listed(
        "10,30", "Camera frame rates to stream the alert's frames at.", item=float, show_item=lambda f: f"{f:g}"
    )
    repeats: int = setting(5, "Clips made of each alert (none cached).", minimum=1)
    out: Path = setting(RESULTS / "clip-cpu.json", "Result file.", metavar="FILE")


@dataclass(frozen=True)
class CapacityBenchConfig(Checked):
    """``bench capacity``: what one camera costs Kafka, measured, and a small run that checks the sums."""

    frames: int = setting(200, "Frames of the sample footage (vtest.avi) encoded at each size.", minimum=10)
    check_cameras: int = setting(10, "Cameras of the small-scale run on the local broker.", minimum=1)
    check_fps: float = setting(10.0, "Their frame rate.", minimum=0.1)
    check_seconds: float = setting(10.0, "How long they stream.", minimum=1)
    out: Path = setting(RESULTS / "capacity-cpu.json", "Result file.", metavar="FILE")


@dataclass(frozen=True)
class InstallBenchConfig(Checked):
    """``bench install``: the edge producer's install beside every service's, and their images."""

    extras: str = setting("all", "The full install's extras, as pip reads them inside [...].")
    no_images: bool = setting(False, "Leave out the sizes of the two images (podman-compose build makes them).")
    out: Path = setting(RESULTS / "install-sizes.json", "Result file.", metavar="FILE")
