"""The detector service's configuration: every option of ``facestream detect``, its default, type and
check, in one place (``facestream.config``). The command line, environment variables and TOML tables
are made from and checked by it; nothing else in the service re-checks them."""

import sys
from dataclasses import dataclass

from facestream.config import (
    check,
    command_line,
    http_host_setting,
    http_port_setting,
    parse_size,
    parse_start_at,
    session_timeout,
    setting,
    show_size,
    start_back_s,
    stats_interval_setting,
    stop_after_idle_setting,
)
from facestream.detector_service.decoding.gpu_decode_settings import DEFAULT_GPU_DECODER, GpuDecodeSettings
from facestream.detector_service.inference.runtime import parse_chain
from facestream.detector_service.tracks import Policy
from facestream.kafka_clients import MAX_MESSAGE_BYTES
from facestream.schemas import DEAD_LETTER_TOPIC, DETECTIONS_TOPIC, FRAMES_TOPIC, POSES_TOPIC

DECODE_CHOICES = ("auto", "gpu", "cpu")  # where JPEGs are decoded; auto: on the GPU with a GPU engine
EMBEDDER_CHOICES = ("none", "sface")


@dataclass(frozen=True)
class DetectorConfig:
    model: str = setting("yunet", "A model name (yunet, movenet) or an .onnx file made by facestream.")
    group: str = setting("facestream-detector", "Kafka consumer group; replicas share it.")
    start_at: str = setting(
        "1m",
        "Where a new group (no commits yet) starts on each partition: earliest, latest, or a duration back "
        "from now (30s, 5m, 2h), so a fresh detector skips a day of retained frames nobody will look at. "
        "An existing group always resumes from its commits.",
        parse=parse_start_at,
        metavar="WHERE",
    )
    exactly_once: bool = setting(
        False,
        "Kafka transactions: a batch's events, dead letters and frame offsets commit together, so readers with "
        "isolation.level=read_committed see each frame's event once, even across crashes (costs throughput).",
    )
    session_timeout_s: float = session_timeout("replica")
    batch: int = setting(8, "Frames per inference (poll size); the largest batch bucket.", minimum=1)
    every_nth: int = setting(
        1,
        "Process one frame in N of each camera and pass over the others (counted, and announced on the "
        "camera's next event as skipped_before): for a heavy model that need not see every frame, e.g. body pose.",
        minimum=1,
    )
    max_fps_per_camera: float | None = setting(
        None,
        "Process at most N frames a second of each camera, newest first (a backlog yields its latest frames): "
        "the others are skipped, counted per camera and announced on the camera's next event (skipped_before). "
        "Frames at least 1/N s apart are taken, so a camera at exactly N fps may lose one to jitter. "
        "Default: every frame.",
        minimum=0.01,
        metavar="N",
    )
    fetch_queue_mb: int = setting(
        256,
        "MiB of frames fetched ahead of the batches at most (librdkafka's queued.max.messages.kbytes): with the "
        "two batches in flight, what bounds the frames a replica holds in memory when it falls behind.",
        minimum=1,
    )
    max_wait_ms: float = setting(50.0, "Longest wait for a batch to fill, from its first frame.", minimum=0)
    provider: str = setting(
        "auto",
        "Where inference runs: auto tries ONNX Runtime's tensorrt, cuda, cpu in turn; or a chain to try in order, "
        "comma-separated, e.g. cuda,cpu or torch,cuda,cpu (torch: MogFace on PyTorch, see `models build-engine`).",
        parse=parse_chain,
        metavar="CHAIN",
    )
    device: int | None = setting(
        None,
        "The GPU to run on, numbered among those visible (CUDA_VISIBLE_DEVICES, when set, lists them): one replica "
        "per GPU with --device 0, --device 1, ... Default: the first.",
        minimum=0,
        metavar="N",
    )
    input_size: tuple[int, int] | None = setting(
        None, "Network input WIDTHxHEIGHT (default: the model's).", parse=parse_size, show=show_size, metavar="WxH"
    )
    score_threshold: float | None = setting(None, "Default: the model's.", minimum=0, maximum=1)
    nms_iou: float | None = setting(None, "Default: the model's.", minimum=0, maximum=1)
    embedder: str = setting(
        "none",
        "Identity embeddings for every face: sface aligns each face by its landmarks and adds a 128-d vector "
        "to it in the event (a detector without landmarks gets box crops, less reliable: it says so).",
        choices=EMBEDDER_CHOICES,
    )
    embed_refresh_s: float = setting(
        2.0,
        "With --embedder: a face is embedded in the frame its track starts in (the detector follows faces per "
        "camera), then again after this many seconds of capture time; the track's other faces carry no embedding "
        "and take the track's last (schemas/README.md).",
        minimum=0,
    )
    embed_first: int = setting(
        3,
        "With --embedder: the first N faces of a track are all embedded: who it is gets voted on by its first "
        "faces downstream, and one poor first face must not decide it alone.",
        minimum=1,
        metavar="N",
    )
    embed_better_by: float = setting(
        0.15,
        "With --embedder: a track's face is also embedded as soon as its quality (size, score, sharpness and pose, "
        "0 to 1: face_quality) is this much over that of the face last embedded for the track, or as much under "
        "it (half hidden behind someone, turned away: its own embedding says whether it is still the same face).",
        minimum=0,
        maximum=1,
    )
    embed_every_frame: bool = setting(
        False,
        "With --embedder: embed every face of every frame, as before the detector followed faces (events still "
        "name each face's track): what it costs a GPU is in docs/performance.md.",
    )
    decode: str = setting(
        "auto",
        "Where JPEGs are decoded; auto: on the GPU (nvImageCodec) when inference runs there.",
        choices=DECODE_CHOICES,
    )
    gpu_decoder: str = setting(
        DEFAULT_GPU_DECODER,
        "nvImageCodec set-up: backends all|hw|gpu|hybrid, then /keep (decode into the last batch's images), "
        "/first (decode on a stream of the GPU's highest priority), /native (each batch through nvImageCodec's C "
        "API in one call, no Python per image; built at first use with the C compiler), /tN (N host threads), /cN "
        "(N images per decoding call; default: the whole batch in one call); e.g. all, hw/keep/t4, hw/native.",
        parse=GpuDecodeSettings.parse,
        metavar="SETUP",
    )
    max_frame_age_s: float | None = setting(
        None,
        "Skip a frame captured longer ago than this when its batch is taken (real time over completeness "
        "for a detector behind its cameras): counted per camera, logged, and announced on the camera's next "
        "event (skipped_before). Default: every frame, however late.",
        minimum=0.001,
    )
    max_frame_bytes: int = setting(
        MAX_MESSAGE_BYTES, "Dead-letter a frame record larger than this, unread.", minimum=1024
    )
    max_pixels: int = setting(
        40_000_000,
        "Dead-letter a frame whose message or JPEG header claims more pixels, before decoding it "
        "(a decompression bomb); the default takes 8K cameras (33 MP).",
        minimum=1,
    )
    decode_threads: int = setting(2, "JPEG decode threads (CPU decoding).", minimum=1)
    ort_threads: int = setting(0, "ONNX Runtime CPU threads (0: ORT's choice).", minimum=0)
    frames_topic: str = setting(FRAMES_TOPIC, "Topic the frames come from.")
    detections_topic: str = setting(DETECTIONS_TOPIC, "Topic the events go to.")
    dead_letter_topic: str = setting(DEAD_LETTER_TOPIC, "Where frames that cannot be read go.")
    stats_interval_s: float = stats_interval_setting(5.0)
    allow_random_weights: bool = setting(
        False, "Run a model exported with --random-init (benchmarks only; every stats line warns)."
    )
    http_port: int = http_port_setting("model warmed up, partitions assigned", was="metrics_port")
    http_host: str = http_host_setting(was="metrics_host")
    switch_interval_ms: float | None = setting(
        None,
        "Python's thread switch interval (default: Python's, 5 ms). GPU decoding gives the interpreter up and "
        "takes it back twice per image; a shorter interval bounds each wait while the event-building thread runs.",
        minimum=0.01,
    )
    stop_after_idle_s: float | None = stop_after_idle_setting("frames")
    fronts: int = setting(
        0,
        "One GPU owner process (decoder, engine, embedder) answering N Kafka-facing front processes, each a "
        "member of the group with its own HTTP port (--http-port plus its number); 0: all in this process. "
        "How many cameras that holds on a GPU, measured: docs/gpu.md.",
        minimum=0,
        metavar="N",
    )
    owner_batch: int = setting(
        0,
        "With --fronts: the largest batch the GPU owner runs; it merges the fronts' batches waiting for it up "
        "to this many frames (0: --batch).",
        minimum=0,
        metavar="N",
    )

    def __post_init__(self) -> None:
        check(self)
        # The chain as parse_chain writes it (no blanks), so every reader can split it on commas.
        object.__setattr__(self, "provider", parse_chain(self.provider))

    @property
    def start_back_s(self) -> float | None:
        """For ``--start-at`` DURATION, its seconds; None for earliest and latest."""
        return start_back_s(self.start_at)

    @property
    def embed_policy(self) -> Policy:
        return Policy(self.embed_refresh_s, self.embed_better_by, self.embed_every_frame, self.embed_first)

    @property
    def gpu_decode_settings(self) -> GpuDecodeSettings:
        return GpuDecodeSettings.parse(self.gpu_decoder)


@dataclass(frozen=True)
class PoseConfig(DetectorConfig):
    """``facestream pose``: the same service with a body-pose model, and its own group and topic."""

    model: str = setting("movenet", "A pose model name (movenet) or an .onnx file made by facestream.")
    group: str = setting("facestream-pose", "Kafka consumer group; replicas share it.")
    detections_topic: str = setting(POSES_TOPIC, "Topic the pose events go to.")


def pose_command(config: PoseConfig | None = None, **changes) -> list[str]:
    """The command that runs a pose replica with ``config`` (and ``changes``) in a child process."""
    return [sys.executable, "-m", "facestream", "pose", *command_line(config or PoseConfig(), **changes)]


def detector_command(config: DetectorConfig | None = None, **changes) -> list[str]:
    """The command that runs a detector replica with ``config`` (and ``changes``) in a child process:
    the one place a detector command line is built (demo, benchmarks, tests)."""
    return [sys.executable, "-m", "facestream.detector_service", *command_line(config or DetectorConfig(), **changes)]
