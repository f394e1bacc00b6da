"""``facestream detect`` and ``facestream models``: the detector service and its model files."""

import json

import click

from facestream.click_types import size
from facestream.detector_service.gpu_decode_settings import DEFAULT_GPU_DECODER, GpuDecodeSettings
from facestream.detector_service.runtime import PROVIDER_CHOICES
from facestream.schemas import DEAD_LETTER_TOPIC, DETECTIONS_TOPIC, FRAMES_TOPIC


def _gpu_decoder(_ctx, _param, value: str) -> str:
    try:
        GpuDecodeSettings.parse(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None
    return value


@click.command(
    epilog="""\b
Examples:
  facestream detect                                   # YuNet, group facestream-detector
  facestream detect --model yunet --group lobby --batch 16 --max-wait-ms 20
  facestream detect --model mogface.onnx --provider cuda    # from `facestream export mogface`
  FACESTREAM_DETECT_BATCH=32 facestream detect        # any option from the environment
""",
    context_settings={"show_default": True},
)
@click.option("--model", default="yunet", help="A model name (yunet) or an .onnx file made by facestream.")
@click.option("--group", default="facestream-detector", help="Kafka consumer group; replicas share it.")
@click.option("--batch", type=click.IntRange(min=1), default=8, help="Frames per inference (poll size).")
@click.option(
    "--max-wait-ms",
    type=click.FloatRange(min=0),
    default=50.0,
    help="Longest wait for a batch to fill, from its first frame.",
)
@click.option(
    "--provider",
    type=click.Choice(PROVIDER_CHOICES),
    default="auto",
    help="ONNX Runtime execution provider; auto tries tensorrt, cuda, cpu in turn.",
)
@click.option("--input-size", callback=size, default=None, help="Network input WIDTHxHEIGHT (default: the model's).")
@click.option("--score-threshold", type=click.FloatRange(0, 1), default=None, help="Default: the model's.")
@click.option("--nms-iou", type=click.FloatRange(0, 1), default=None, help="Default: the model's.")
@click.option(
    "--decode",
    type=click.Choice(["auto", "gpu", "cpu"]),
    default="auto",
    help="Where JPEGs are decoded; auto: on the GPU (nvImageCodec) when inference runs there.",
)
@click.option(
    "--gpu-decoder",
    default=DEFAULT_GPU_DECODER,
    callback=_gpu_decoder,
    help="nvImageCodec set-up: backends all|hw|gpu|hybrid, then /keep (decode into the last batch's "
    "images), /tN (N host threads); e.g. all, hw/keep/t4.",
)
@click.option("--decode-threads", type=click.IntRange(min=1), default=2, help="JPEG decode threads (CPU decoding).")
@click.option(
    "--ort-threads", type=click.IntRange(min=0), default=0, help="ONNX Runtime CPU threads (0: ORT's choice)."
)
@click.option("--frames-topic", default=FRAMES_TOPIC)
@click.option("--detections-topic", default=DETECTIONS_TOPIC)
@click.option("--dead-letter-topic", default=DEAD_LETTER_TOPIC, help="Where frames that cannot be read go.")
@click.option("--stats-interval", type=float, default=5.0, help="Seconds between stats lines (0: off).")
@click.option(
    "--allow-random-weights",
    is_flag=True,
    help="Run a model exported with --random-init (benchmarks only; every stats line warns).",
)
@click.option(
    "--metrics-port",
    type=click.IntRange(min=0, max=65535),
    default=0,
    help="Serve Prometheus metrics on this port (0: off).",
)
@click.option(
    "--switch-interval-ms",
    type=click.FloatRange(min=0.01),
    default=None,
    help="Python's thread switch interval (default: Python's, 5 ms). GPU decoding gives the "
    "interpreter up and takes it back twice per image; a shorter interval bounds each wait "
    "while the event-building thread runs.",
)
@click.option(
    "--stop-after-idle",
    type=click.FloatRange(min=0),
    default=None,
    help="Exit after this many seconds without frames (batch jobs, tests).",
)
def detect(**options) -> None:
    """Consume frames, detect faces, publish one detection event per frame."""
    from facestream.detector_service.service import DetectorConfig, DetectorService

    config = DetectorConfig(**options)
    summary = DetectorService(config).run()
    click.echo(json.dumps(summary))


@click.group()
def models() -> None:
    """Fetch and inspect model files."""


@models.command("fetch", epilog="\b\nExamples:\n  facestream models fetch\n  facestream models fetch yunet")
@click.argument("names", nargs=-1)
def fetch(names: tuple[str, ...]) -> None:
    """Download, verify (sha256) and prepare models; all known ones if none are named."""
    from facestream.detector_service.models import FETCHABLE, resolve

    for name in names or sorted(FETCHABLE):
        if name not in FETCHABLE:
            raise click.BadParameter(f"unknown model {name!r}; known: {', '.join(sorted(FETCHABLE))}")
        click.echo(f"{name}: {resolve(name)}")


@models.command(
    "build-engine",
    epilog="""\b
Examples:
  facestream models build-engine --model mogface-640x480.onnx --provider tensorrt --batch 16
  facestream models build-engine --model yunet --batch 32
""",
    context_settings={"show_default": True},
)
@click.option("--model", default="yunet", help="A model name (yunet) or an .onnx file made by facestream.")
@click.option("--batch", type=click.IntRange(min=1), default=8, help="The largest batch detect will run.")
@click.option("--provider", type=click.Choice(PROVIDER_CHOICES), default="auto")
@click.option("--input-size", callback=size, default=None, help="Network input WIDTHxHEIGHT (default: the model's).")
@click.option("--allow-random-weights", is_flag=True, help="Accept a --random-init file (benchmarks).")
def build_engine(model: str, batch: int, provider: str, input_size, allow_random_weights: bool) -> None:
    """Build and warm every batch bucket now (TensorRT engines land in the engine cache), so the first
    frame of `facestream detect` never waits for a build."""
    import time

    from facestream.detector_service.runtime import engine_cache_dir
    from facestream.detector_service.service import DetectorConfig, build_processor

    started = time.monotonic()
    processor = build_processor(
        DetectorConfig(
            model=model,
            batch=batch,
            provider=provider,
            input_size=input_size,
            allow_random_weights=allow_random_weights,
        )
    )
    engine = processor.engine
    click.echo(f"{processor.describe()}: buckets {list(engine.buckets)} ready in {time.monotonic() - started:.1f} s")
    if engine.provider == "tensorrt":
        click.echo(f"TensorRT engine and timing caches: {engine_cache_dir(engine.path)}")
    processor.close()
