"""``facestream detect``, ``facestream pose`` and ``facestream models``: the inference service (with a
face model or a body-pose model) and its model files."""

import json
from pathlib import Path

import click

from facestream.config import options
from facestream.detector_service.config import DetectorConfig, PoseConfig


@click.command(
    epilog="""\b
Examples:
  facestream detect                                   # YuNet, group facestream-detector
  facestream detect --model yunet --group lobby --batch 16 --max-wait-ms 20
  facestream detect --model mogface.onnx --provider cuda    # from `facestream export mogface`
  facestream detect --model mogface.onnx --device 1   # the second GPU: one replica per GPU
  facestream detect --max-fps-per-camera 5            # at most 5 frames a second of each camera
  facestream detect --provider cuda --fronts 4        # one GPU owner, four Kafka-facing processes
  FACESTREAM_DETECT_BATCH=32 facestream detect        # any option from the environment
""",
    context_settings={"show_default": True},
)
@options(DetectorConfig)
def detect(**values) -> None:
    """Consume frames, detect faces, publish one detection event per frame."""
    click.echo(json.dumps(_serve(DetectorConfig(**values))))


def _serve(config: DetectorConfig) -> dict:
    """One process, or (``--fronts N``) a GPU owner answering N front processes."""
    if config.fronts:
        from facestream.detector_service.owner.fronts import run_fronts

        return run_fronts(config)
    from facestream.detector_service.service import DetectorService

    return DetectorService(config).run()


@click.command(
    epilog="""\b
Examples:
  facestream pose                                     # MoveNet, group facestream-pose, topic poses
  facestream pose --every-nth 3                       # a third of each camera's frames
  FACESTREAM_POSE_PROVIDER=cuda facestream pose       # any option from the environment
""",
    context_settings={"show_default": True},
)
@options(PoseConfig)
def pose(**values) -> None:
    """Consume frames, find people and their body keypoints, publish one pose event per frame."""
    click.echo(json.dumps(_serve(PoseConfig(**values))))


@click.group()
def models() -> None:
    """Fetch and inspect model files."""


@models.command(
    "fetch",
    epilog="""\b
Examples:
  facestream models fetch
  facestream models fetch yunet sface
  facestream models fetch movenet
""",
)
@click.argument("names", nargs=-1)
def fetch(names: tuple[str, ...]) -> None:
    """Download, verify (sha256) and prepare models (detectors, embedders, body pose); all if none are named.

    The pose model ships as TFLite: the first fetch converts it to ONNX in a converter environment of
    its own (TensorFlow, a few hundred MB) and checks the result against the TFLite interpreter."""
    from facestream import assets, paths
    from facestream.detector_service import models
    from facestream.detector_service.inference import embedder

    known = {**models.FETCHABLE, **embedder.FETCHABLE}
    for name in names or sorted(known):
        if name not in known:
            raise click.BadParameter(f"unknown model {name!r}; known: {', '.join(sorted(known))}")
    with assets.one_fetch_at_a_time():
        for name in names or sorted(known):
            click.echo(f"{name}: {known[name](paths.models_dir())}")


@models.command(
    "build-engine",
    epilog="""\b
Examples:
  facestream models build-engine --model mogface-640x480.onnx --provider tensorrt --batch 16
  facestream models build-engine --model yunet --batch 32
  facestream models build-engine --model mogface.onnx --provider torch,cuda --batch 32 --checkpoint mogface.pth
""",
    context_settings={"show_default": True},
)
@options(DetectorConfig, only=("model", "batch", "provider", "input_size", "allow_random_weights"))
@click.option(
    "--checkpoint",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="--provider torch: the MogFace checkpoint the model file was exported from (checked by its sha256).",
)
@click.option(
    "--random-seed",
    type=int,
    default=None,
    help="--provider torch, instead of --checkpoint: the seed a --random-init file was exported with (benchmarks).",
)
@click.option(
    "--torch-build",
    type=click.Choice(("quick", "autotune")),
    default="quick",
    help="--provider torch: quick builds in a minute or two; autotune also times Inductor's Triton kernels "
    "against cuDNN's for each layer (much longer, and no faster where it was tried).",
)
def build_engine(checkpoint: Path | None, random_seed: int | None, torch_build: str, **values) -> None:
    """Build and warm every batch bucket now (TensorRT engines land in the engine cache; with --provider
    torch, MogFace's PyTorch engine is compiled), so the first frame of `facestream detect` never waits."""
    import time

    from facestream.detector_service.inference.runtime import TORCH, engine_cache_dir
    from facestream.detector_service.service import build_processor

    started = time.monotonic()
    config = DetectorConfig(**values)
    if config.provider.split(",")[0] == TORCH:
        from facestream.detector_service import models
        from facestream.detector_service.inference.torch_engine import build_for_file

        path = models.resolve(config.model)
        plugin = models.plugin_for(models.read_metadata(path), str(path))
        input_hw = plugin.input_spec.resolve(config.input_size)
        build_for_file(path, plugin, input_hw, config.batch, checkpoint, random_seed, torch_build, click.echo)
    processor = build_processor(config)
    engine = processor.engine
    click.echo(f"{processor.describe()}: buckets {list(engine.buckets)} ready in {time.monotonic() - started:.1f} s")
    if engine.provider == "tensorrt":
        click.echo(f"TensorRT engine and timing caches: {engine_cache_dir(engine.path)}")
    processor.close()
