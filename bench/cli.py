"""``python -m bench``: the benchmarks, each writing bench/results/*.json and printing a table."""

import shlex
import sys
from pathlib import Path

import click

from bench import RESULTS
from bench.settings import (
    AlertingBenchConfig,
    AlertStoreBenchConfig,
    BacklogBenchConfig,
    FallBenchConfig,
    GateBenchConfig,
    KafkaBenchConfig,
    LineBenchConfig,
    LiveBenchConfig,
    PoseBenchConfig,
    SoakConfig,
    ThresholdBenchConfig,
)
from facestream.config import options, parse_size, parsed
from facestream.detector_service.config import DECODE_CHOICES, EMBEDDER_CHOICES, PROVIDER_CHOICES
from facestream.detector_service.decoding.gpu_decode_settings import DEFAULT_GPU_DECODER


def _name(model: str) -> str:
    """How a model appears in result file names: its name, or the stem of its file."""
    return Path(model).stem if model.endswith(".onnx") else model


def _command(verb: str) -> str:
    """The command line as typed, for the result file (``python -m bench VERB ...``)."""
    return "python -m bench " + " ".join(shlex.quote(a) for a in sys.argv[sys.argv.index(verb) :])


def _batches(_ctx, _param, value: str) -> tuple[int, ...]:
    try:
        return tuple(int(v) for v in value.split(","))
    except ValueError:
        raise click.BadParameter(f"expected comma-separated sizes like 1,8,16,32, got {value!r}") from None


def _cpu_list(_ctx, _param, value: str) -> tuple[int, ...]:
    """``12-15`` or ``0,2,4`` (or both, comma-separated) -> the core numbers; empty -> ()."""
    cores: list[int] = []
    try:
        for part in filter(None, value.split(",")):
            first, _, last = part.partition("-")
            cores += range(int(first), int(last or first) + 1)
    except ValueError:
        raise click.BadParameter(f"expected cores like 12-15 or 0,2,4, got {value!r}") from None
    return tuple(cores)


def _key_values(_ctx, _param, values: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    pairs = tuple(tuple(v.split("=", 1)) for v in values)
    bad = [v for v, pair in zip(values, pairs) if len(pair) != 2 or not all(pair)]
    if bad:
        raise click.BadParameter(f"expected KEY=VALUE, got {', '.join(map(repr, bad))}")
    return pairs  # type: ignore[return-value]


# MogFace's export, for the benchmarks that export it (engine, profile).
heads_option = click.option(
    "--merge-heads/--separate-heads",
    default=True,
    help="MogFace: export its two prediction heads as one (exact; what `facestream export` does), "
    "or as two (the official layout; the PyTorch baselines keep it either way).",
)


# What the cameras send (decode, e2e): frames of one size, or the photos as they are, 640 px wide.
frame_size_option = click.option(
    "--frame-size",
    type=parsed(parse_size, "WxH"),
    default=None,
    help="Frames of exactly WIDTHxHEIGHT (the photos scaled to cover it, centre-cropped), as a camera of that "
    "resolution sends; default: the photos at 640 px wide, their own aspect.",
)


@click.group()
def bench() -> None:
    """Benchmarks: engine speed against PyTorch, and more."""


@bench.command(
    epilog="""\b
Examples (on the GPU machine):
  python -m bench engine --model mogface --batch 1,8,16,32 --precision fp16 --provider cuda
  python -m bench engine --model yunet --batch 1,32,128 --provider cuda --baselines none
  python -m bench engine --model mogface --provider cpu --height 96 --width 128 --batch 1,2   # a dry run
  python -m bench engine --model mogface --batch 32 --baselines none --cuda-option cudnn_conv_algo_search=HEURISTIC
  python -m bench engine --model mogface --batch 1,32 --separate-heads   # the official layout of the heads
""",
    context_settings={"show_default": True},
)
@click.option("--model", default="mogface", help="mogface, mogface_e (random weights, exported here), yunet or a path.")
@click.option("--batch", "batches", default="1,8,16,32", callback=_batches)
@click.option("--precision", type=click.Choice(["fp16", "fp32"]), default="fp16")
@click.option("--provider", type=click.Choice(PROVIDER_CHOICES), default="cuda")
@click.option("--height", type=int, default=480)
@click.option("--width", type=int, default=640)
@click.option("--iters", type=int, default=20, help="Inferences per timed repeat.")
@click.option("--repeats", type=int, default=5, help="Timed repeats; the median is reported.")
@click.option(
    "--baselines",
    default="eager,compile",
    help="PyTorch baselines: eager, compile (default mode), autotune (max-autotune, slow to build), or none.",
)
@click.option(
    "--cuda-option",
    "cuda_options",
    multiple=True,
    callback=_key_values,
    help="A CUDA provider option over the engine's defaults, KEY=VALUE (repeatable).",
)
@heads_option
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Result file (default: bench/results/engine-MODEL-PRECISION-PROVIDER[-OPTIONS].json).",
)
def engine(
    model: str,
    batches,
    precision: str,
    provider: str,
    height: int,
    width: int,
    iters: int,
    repeats: int,
    baselines: str,
    cuda_options: tuple[tuple[str, str], ...],
    merge_heads: bool,
    out: Path | None,
) -> None:
    """Engine ms/image and images/s per batch, with PyTorch eager and torch.compile in the same run."""
    from bench.engine import TORCH_MODES, EngineBenchConfig, run

    chosen = tuple(b for b in baselines.split(",") if b and b != "none")
    unknown = set(chosen) - set(TORCH_MODES)
    if unknown:
        raise click.BadParameter(f"unknown baselines {sorted(unknown)}")
    # A variant never overwrites the main file.
    variant = "-separate-heads" * (not merge_heads) + "".join(f"-{key}-{value}" for key, value in cuda_options)
    cfg = EngineBenchConfig(
        model=model,
        batches=batches,
        precision=precision,
        provider=provider,
        height=height,
        width=width,
        iters=iters,
        repeats=repeats,
        baselines=chosen,
        cuda_options=cuda_options,
        merge_heads=merge_heads,
        out=out or RESULTS / f"engine-{_name(model)}-{precision}-{provider}{variant}.json",
    )
    run(cfg, _command("engine"))


@bench.command(
    epilog="""\b
Examples (on the GPU machine):
  python -m bench profile --model mogface --batch 16 --provider cuda
  python -m bench profile --model mogface --batch 1 --separate-heads
""",
    context_settings={"show_default": True},
)
@click.option("--model", default="mogface", help="mogface, mogface_e, yunet or a path.")
@click.option("--batch", type=int, default=16)
@click.option("--precision", type=click.Choice(["fp16", "fp32"]), default="fp16")
@click.option("--provider", type=click.Choice(["cuda", "cpu"]), default="cuda")
@click.option("--height", type=int, default=480)
@click.option("--width", type=int, default=640)
@heads_option
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Result file (default: bench/results/profile-MODEL-PRECISION-PROVIDER[-separate-heads][-bN].json, "
    "-bN unless the batch is 16).",
)
def profile(
    model: str, batch: int, precision: str, provider: str, height: int, width: int, merge_heads: bool, out: Path | None
) -> None:
    """Per-operator time of the exported and the rewritten graph (where the milliseconds go)."""
    from bench.engine import EngineBenchConfig
    from bench.profile import run

    variant = "-separate-heads" * (not merge_heads) + ("" if batch == 16 else f"-b{batch}")
    cfg = EngineBenchConfig(
        model=model,
        batches=(batch,),
        precision=precision,
        provider=provider,
        height=height,
        width=width,
        iters=0,
        repeats=0,
        baselines=(),
        merge_heads=merge_heads,
        out=out or RESULTS / f"profile-{_name(model)}-{precision}-{provider}{variant}.json",
    )
    run(cfg, batch, _command("profile"))


@bench.command(
    epilog="""\b
Examples (on the GPU machine):
  python -m bench pipeline --model yunet --batch 256 --frames 8192 --provider cuda --precision fp16
  python -m bench pipeline --model yunet --batch 256 --frames 16384 --provider cuda --precision fp16 --workers 4
  python -m bench pipeline --model yunet --batch 256 --frames 16384 --provider cuda --precision fp16 --fronts 4
  python -m bench pipeline --model yunet --batch 256 --frames 8192 --provider cuda --gpu-decoder all
  python -m bench pipeline --model mogface --batch 16 --frames 512 --provider cuda
""",
    context_settings={"show_default": True},
)
@click.option("--model", default="mogface", help="mogface, mogface_e, yunet or a path.")
@click.option("--batch", type=int, default=16)
@click.option("--frames", type=int, default=512, help="JPEG frames per repeat (the sample photos, cycled).")
@click.option("--precision", type=click.Choice(["fp16", "fp32"]), default="fp16")
@click.option("--provider", type=click.Choice(PROVIDER_CHOICES), default="cuda")
@click.option("--height", type=int, default=480)
@click.option("--width", type=int, default=640)
@click.option(
    "--decode",
    type=click.Choice(DECODE_CHOICES),
    default="auto",
    help="Where JPEGs are decoded, as for detect.",
)
@click.option("--decode-threads", type=int, default=8)
@click.option("--gpu-decoder", default=DEFAULT_GPU_DECODER, help="nvImageCodec's set-up, as for detect (e.g. all/t4).")
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=1,
    help="Detector processes sharing the device (replicas), each taking every n-th batch.",
)
@click.option(
    "--fronts",
    type=click.IntRange(min=0),
    default=0,
    help="One GPU owner process (decoder, engine, embedder) answering this many front processes, each "
    "taking every n-th batch and building its events (0: the processor in one process, or --workers).",
)
@click.option(
    "--owner-batch",
    type=click.IntRange(min=0),
    default=0,
    help="With --fronts: the owner's largest run, merging the fronts' batches of --batch (0: --batch).",
)
@click.option(
    "--switch-interval-ms",
    type=click.FloatRange(min=0.01),
    default=None,
    help="Python's thread switch interval in each detector process (default: Python's, 5 ms). "
    "nvImageCodec gives the interpreter up and takes it back twice per image; a shorter "
    "interval bounds its wait while the event-building thread holds it.",
)
@click.option("--embedder", type=click.Choice(EMBEDDER_CHOICES), default="none", help="As for detect.")
@frame_size_option
@click.option("--repeats", type=int, default=3)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None)
def pipeline(
    model: str,
    batch: int,
    frames: int,
    precision: str,
    provider: str,
    height: int,
    width: int,
    decode: str,
    decode_threads: int,
    gpu_decoder: str,
    workers: int,
    fronts: int,
    owner_batch: int,
    switch_interval_ms: float | None,
    embedder: str,
    frame_size: tuple[int, int] | None,
    repeats: int,
    out: Path | None,
) -> None:
    """JPEG bytes in memory -> serialised events, against the engine alone at the same batch."""
    if fronts and workers > 1:
        raise click.UsageError("--fronts and --workers are two designs: pick one")
    from bench.pipeline import PipelineBenchConfig, run

    cfg = PipelineBenchConfig(
        model=model,
        batch=batch,
        frames=frames,
        precision=precision,
        provider=provider,
        height=height,
        width=width,
        decode=decode,
        decode_threads=decode_threads,
        gpu_decoder=gpu_decoder,
        workers=workers,
        fronts=fronts,
        owner_batch=owner_batch,
        switch_interval_ms=switch_interval_ms,
        repeats=repeats,
        embedder=embedder,
        frame_size=frame_size,
        out=out
        or RESULTS
        / f"pipeline-{_name(model)}-{precision}-{provider}"
        f"{f'-{workers}-workers' if workers > 1 else ''}"
        f"{f'-owner-{fronts}-fronts' if fronts else ''}"
        f"{f'-owner-batch-{owner_batch}' if owner_batch else ''}"
        f"{'' if gpu_decoder == DEFAULT_GPU_DECODER else '-' + gpu_decoder.replace('/', '-')}"
        f"{'' if switch_interval_ms is None else f'-switch-{switch_interval_ms:g}ms'}"
        f"{'' if embedder == 'none' else f'-{embedder}'}"
        f"{'' if frame_size is None else '-{}x{}'.format(*frame_size)}.json",
    )
    run(cfg, _command("pipeline"))


@bench.command(
    epilog="""\b
Examples:
  python -m bench decode --variants all,hw,gpu,all/keep,hw/keep,all/t4     # on the GPU machine
  python -m bench decode --frames 256 --no-load                           # the CPU pool alone, anywhere
""",
    context_settings={"show_default": True},
)
@click.option("--frames", type=int, default=4096, help="JPEG frames per repeat (the sample photos, 640 px wide).")
@click.option("--batch", type=int, default=256)
@click.option("--height", type=int, default=480)
@click.option("--width", type=int, default=640)
@frame_size_option
@click.option(
    "--variants",
    default="all,hw,gpu,all/keep,hw/keep,all/t4",
    help="GPU decoder set-ups: backends all|hw|gpu|hybrid, then /keep (reuse Images), /tN (N host threads), "
    "/cN (N images per nvImageCodec call).",
)
@click.option("--cpu-threads", type=int, default=16, help="Threads of the CPU decoder, measured first.")
@click.option("--repeats", type=int, default=3)
@click.option("--load/--no-load", default=True, help="Also time each decoder while YuNet keeps the GPU busy.")
@click.option(
    "--python-load",
    type=click.FloatRange(0, 0.95),
    default=0.0,
    help="Also time each decoder while a thread of its process runs Python this share of the time (0: not).",
)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=RESULTS / "decode-jpeg.json")
def decode(
    frames: int,
    batch: int,
    height: int,
    width: int,
    frame_size: tuple[int, int] | None,
    variants: str,
    cpu_threads: int,
    repeats: int,
    load: bool,
    python_load: float,
    out: Path,
) -> None:
    """JPEG decoding alone: the CPU pool and nvImageCodec set-ups side by side, GPU idle and busy."""
    from bench.decode import DecodeBenchConfig, run

    cfg = DecodeBenchConfig(
        frames=frames,
        batch=batch,
        height=height,
        width=width,
        frame_size=frame_size,
        variants=tuple(v for v in variants.split(",") if v),
        cpu_threads=cpu_threads,
        repeats=repeats,
        load=load,
        out=out,
        python_load=python_load,
    )
    run(cfg, _command("decode"))


@bench.command(
    epilog="""\b
Examples (on the GPU machine):
  python -m bench embedding --model yunet --batch 256 --frames 4096 --faces 1,2,4,6
  python -m bench embedding --provider cpu --precision fp32 --batch 8 --frames 32 --faces 1,4 --repeats 1  # dry run
""",
    context_settings={"show_default": True},
)
@click.option(
    "--model", default="yunet", help="The detector: yunet, mogface (random weights, exported here) or a path."
)
@click.option("--embedder", type=click.Choice([e for e in EMBEDDER_CHOICES if e != "none"]), default="sface")
@click.option("--batch", type=int, default=256, help="Frames per detector batch.")
@click.option("--frames", type=int, default=4096, help="Frames per pipeline repeat.")
@click.option("--faces", default="1,2,4,6", callback=_batches, help="Faces per frame, one comparison each.")
@click.option("--precision", type=click.Choice(["fp16", "fp32"]), default="fp16")
@click.option("--provider", type=click.Choice(PROVIDER_CHOICES), default="cuda")
@click.option("--height", type=int, default=480)
@click.option("--width", type=int, default=640)
@click.option(
    "--decode", type=click.Choice(DECODE_CHOICES), default="auto", help="Where JPEGs are decoded, as for detect."
)
@click.option("--decode-threads", type=int, default=8)
@click.option("--gpu-decoder", default=DEFAULT_GPU_DECODER, help="nvImageCodec's set-up, as for detect.")
@click.option("--repeats", type=int, default=3)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None)
def embedding(out: Path | None, faces: tuple[int, ...], **options) -> None:
    """Embeddings' cost: the embedder alone per batch of faces, and the detector pipeline's frames/s
    with and without them at 1 to 6 faces per frame, side by side."""
    from bench.embedding import EmbeddingBenchConfig, run

    name = (
        f"embedding-{options['embedder']}-{_name(options['model'])}-{options['precision']}-{options['provider']}.json"
    )
    run(EmbeddingBenchConfig(faces=faces, out=out or RESULTS / name, **options), _command("embedding"))


@bench.command(
    epilog="""\b
Examples:
  python -m bench gate                                      # vtest.avi and a quiet scene, YuNet on the CPU
  python -m bench gate --min-area 0.001,0.01 --keyframe-s 2
""",
    context_settings={"show_default": True},
)
@options(GateBenchConfig)
def gate(**values) -> None:
    """The motion gate: share of frames sent and recall of faces against sending every frame."""
    from bench.gate import run

    run(GateBenchConfig(**values), _command("gate"))


@bench.command(
    epilog="""\b
Examples:
  python -m bench live                                     # both parts, 720p and 1080p
  python -m bench live --cameras '' --repeats 5            # decoding cost only
  python -m bench live --sizes '' --cameras 16,20,24 --camera-repeats 3 --out bench/results/live-cameras-cpu.json
""",
    context_settings={"show_default": True},
)
@options(LiveBenchConfig)
def live(**values) -> None:
    """Live RTSP cameras: decoding CPU per camera by library and mode; cameras one producer core holds."""
    from bench.live import run

    run(LiveBenchConfig(**values), _command("live"))


@bench.command(
    epilog="""\b
Examples:
  python -m bench alert-store                              # a million alerts, SQLite and PostgreSQL
  python -m bench alert-store --alerts 100000 --engines sqlite
""",
    context_settings={"show_default": True},
)
@options(AlertStoreBenchConfig)
def alert_store(**values) -> None:
    """The history's speed: a page of alerts out of a million, under filters, on SQLite and PostgreSQL."""
    from bench.alert_store import run

    run(AlertStoreBenchConfig(**values), _command("alert-store"))


@bench.command(
    epilog="""\b
Examples:
  python -m bench threshold                   # YuNet + SFace on this machine's CPU
""",
    context_settings={"show_default": True},
)
@options(ThresholdBenchConfig)
def threshold(**values) -> None:
    """The stranger threshold: SFace similarities of one person and of two people, false match and
    false stranger rates per threshold, on the sample photos and their variants."""
    from bench.threshold import run

    run(ThresholdBenchConfig(**values), _command("threshold"))


@bench.command(
    epilog="""\b
Examples:
  python -m bench pose --provider cpu --batch 1,8 --frames 200
  python -m bench pose --provider cuda --batch 1,16,64 --frames 795   # on the GPU machine
  python -m bench pose --provider cuda --batch 32,64,256 --precision fp16
""",
    context_settings={"show_default": True},
)
@options(PoseBenchConfig)
def pose(**values) -> None:
    """Body-pose frames/s (MoveNet through the service's processor) on OpenCV's pedestrian video."""
    from bench.pose import run

    run(PoseBenchConfig(**values), _command("pose"))


@bench.command(
    epilog="""\b
Examples:
  python -m bench line
  python -m bench line --input-sizes 512x384 --every 1,2,4,10 --min-score 0.3
""",
    context_settings={"show_default": True},
)
@options(LineBenchConfig)
def line(**values) -> None:
    """The line rule's crossings on OpenCV's pedestrian video against crossings counted by eye."""
    from bench.line import run

    run(LineBenchConfig(**values), _command("line"))


@bench.command(
    epilog="""\b
Examples:
  python -m bench fall --falls 5
""",
    context_settings={"show_default": True},
)
@options(FallBenchConfig)
def fall(**values) -> None:
    """Time from the first frame of a fall to its alert on the broker, live (pose service + alerting)."""
    from bench.fall import run

    run(FallBenchConfig(**values), _command("fall"))


@bench.command(
    epilog="""\b
Examples (this machine, local broker running):
  python -m bench soak                                  # an hour: make soak
  python -m bench soak --minutes 3 --warm-up-s 60 --out /tmp/soak.json   # a quick look
""",
    context_settings={"show_default": True},
)
@options(SoakConfig)
def soak(**values) -> None:
    """The CPU pipeline at a steady load for an hour: memory, descriptors and lag must stay flat."""
    from bench.soak import run

    found = run(SoakConfig(**values), _command("soak"))
    if not found["verdict"]["holds"]:
        raise click.exceptions.Exit(1)


@bench.command(
    epilog="""\b
Examples (this machine, local broker running):
  python -m bench alerting --events 60000 --cameras 100 --workers 1,2
  python -m bench alerting --events 20000 --faces 4 --runs 1
""",
    context_settings={"show_default": True},
)
@options(AlertingBenchConfig)
def alerting(**values) -> None:
    """Events per second alerting workers drain from a backlog, with real embeddings and a gallery."""
    from bench.alerting import run

    run(AlertingBenchConfig(**values), _command("alerting"))


@bench.command(
    epilog="\b\nExample (this machine, local broker running):\n  python -m bench kafka --frames 5000 --runs 3",
    context_settings={"show_default": True},
)
@options(KafkaBenchConfig)
def kafka(**values) -> None:
    """The detector's Kafka plumbing (no-op model) against Kafka's own kafka-consumer-perf-test."""
    from bench.kafka import run

    run(KafkaBenchConfig(**values), _command("kafka"))


@bench.command(
    epilog="""\b
Examples:
  python -m bench e2e --model yunet --cameras 1,2,3,4 --provider cpu          # this machine
  python -m bench e2e --model mogface.onnx --cameras 4,8,10,12 --batch 16 --provider cuda
  python -m bench e2e --model yunet --cameras 50,100,200,300 --replicas 2 --batch 64
  python -m bench e2e --model yunet.onnx --cameras 300 --replicas 4 --batch 128 --frame-size 640x480
  python -m bench e2e --model yunet.onnx --cameras 300 --replicas 4 --batch 128 --producer-cpus 12-15 --profile-s 5
  python -m bench e2e --model yunet.onnx --cameras 300,300,300 --every-count --warm-up-s 10 --frame-size 640x480
  python -m bench e2e --model mogface.onnx --batch 16 --source vtest.avi --produce-arg=--motion-gate --cameras 10,20
""",
    context_settings={"show_default": True},
)
@click.option("--model", default="yunet", help="A model name or .onnx file, as for detect.")
@click.option("--cameras", default="1,2,4,8", callback=_batches, help="Camera counts to try, in order.")
@click.option("--fps", type=float, default=30.0, help="Frames per second per camera.")
@click.option("--duration", type=float, default=20.0, help="Seconds of streaming per camera count.")
@click.option("--replicas", type=int, default=1, help="Detector processes in the consumer group.")
@click.option(
    "--fronts",
    type=click.IntRange(min=1),
    default=1,
    help="Kafka-facing processes per replica around one GPU owner (detect --fronts); members: replicas x fronts.",
)
@click.option("--batch", type=int, default=8)
@click.option("--max-wait-ms", type=float, default=20.0)
@click.option("--provider", type=click.Choice(PROVIDER_CHOICES), default="auto")
@click.option("--latency-limit-ms", type=float, default=200.0, help="Stop once p99 capture-to-event passes this.")
@click.option("--allow-random-weights", is_flag=True, help="Pass through to detect (random-init benchmark files).")
@click.option(
    "--cameras-per-producer",
    type=click.IntRange(min=1),
    default=50,
    help="Cameras paced by one producer process (more cameras, more processes).",
)
@frame_size_option
@click.option(
    "--producer-cpus",
    callback=_cpu_list,
    default="",
    help="Pin the producer processes to these cores (e.g. 12-15) and the broker, detectors and reader to the "
    "others; default: no pinning.",
)
@click.option(
    "--source",
    default=None,
    help="Every camera streams this source (e.g. a video file; as for produce); default: the photo folders.",
)
@click.option(
    "--produce-arg", "produce_args", multiple=True, help="More options for produce, e.g. --produce-arg=--motion-gate."
)
@click.option(
    "--warm-up-s",
    type=click.FloatRange(min=0),
    default=0.0,
    help="Stream the first camera count this long before measuring (reported apart): a fresh broker runs cold.",
)
@click.option("--every-count", is_flag=True, help="Measure every camera count, also past the first over the limit.")
@click.option(
    "--profile-s",
    type=click.FloatRange(min=0),
    default=0.0,
    help="Sample every replica with py-spy for this many seconds in each step (needs py-spy; 0: never).",
)
@click.option(
    "--detect-arg", "detect_args", multiple=True, help="More options for detect, e.g. --detect-arg=--decode=gpu."
)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None)
def e2e(
    model: str,
    cameras,
    fps: float,
    duration: float,
    replicas: int,
    fronts: int,
    batch: int,
    max_wait_ms: float,
    provider: str,
    latency_limit_ms: float,
    allow_random_weights: bool,
    cameras_per_producer: int,
    frame_size: tuple[int, int] | None,
    producer_cpus: tuple[int, ...],
    source: str | None,
    produce_args: tuple[str, ...],
    warm_up_s: float,
    every_count: bool,
    profile_s: float,
    detect_args: tuple[str, ...],
    out: Path | None,
) -> None:
    """Producers -> Kafka -> detector replicas -> events: how many cameras stay under the latency limit."""
    from bench.e2e import E2EConfig, run

    cfg = E2EConfig(
        model=model,
        cameras=cameras,
        fps=fps,
        duration_s=duration,
        replicas=replicas,
        batch=batch,
        max_wait_ms=max_wait_ms,
        provider=provider,
        latency_limit_ms=latency_limit_ms,
        out=out,
        extra_detect_args=(*detect_args, *(("--allow-random-weights",) if allow_random_weights else ())),
        cameras_per_producer=cameras_per_producer,
        frame_size=frame_size,
        producer_cpus=producer_cpus,
        source=source,
        extra_produce_args=produce_args,
        warm_up_s=warm_up_s,
        every_count=every_count,
        profile_s=profile_s,
        fronts=fronts,
    )
    run(cfg, _command("e2e"))


@bench.command(
    epilog="""\b
Examples (a broker running: `facestream kafka start`):
  python -m bench backlog --frames 600 --runs 3
  python -m bench backlog --batch 16 --ort-threads 2 --out /tmp/backlog.json
""",
    context_settings={"show_default": True},
)
@options(BacklogBenchConfig)
def backlog(**values) -> None:
    """One CPU detector draining a backlog of frames on a real broker: frames/s from the events' own times.

    The producer first fills a fresh topic with the sample photos, cycled and scaled to --width; then
    the detector runs over the backlog. Throughput is (events - 1) / (last detect_ts - first
    detect_ts), so start-up, the group join and the idle wait at the end do not count."""
    from bench.detector_backlog import run

    run(BacklogBenchConfig(**values), _command("backlog"))
