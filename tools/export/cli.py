"""``facestream export``: MogFace checkpoint -> ONNX, and what a variant costs (FLOPs, parameters)."""

import importlib.util
import time
from pathlib import Path

import click

from facestream.errors import ConfigError

VARIANT_CHOICES = ("mogface", "mogface_e")


def _need_torch() -> None:
    if importlib.util.find_spec("torch") is None:
        raise ConfigError("facestream export needs PyTorch: pip install 'facestream[export]'")


@click.group()
def export() -> None:
    """Export models to ONNX (needs PyTorch: pip install 'facestream[export]')."""


@export.command(
    "mogface",
    epilog="""\b
Examples:
  facestream export mogface --checkpoint mogface.pth --out mogface.onnx
  facestream export mogface --variant mogface_e --checkpoint mogface_e.pth --out mogface_e.onnx --dynamic-hw
  facestream export mogface --checkpoint mogface.pth --out mogface-fp16.onnx --fp16 --height 720 --width 1280
  facestream export mogface --random-init --out bench.onnx     # benchmarks only: boxes mean nothing
  facestream export mogface --checkpoint mogface.pth --out mogface-official.onnx --separate-heads
""",
    context_settings={"show_default": True},
)
@click.option(
    "--variant",
    type=click.Choice(VARIANT_CHOICES),
    default="mogface",
    help="mogface = MogFace-large (ResNet-101); mogface_e = MogFace-E.",
)
@click.option(
    "--checkpoint",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="The official .pth (loaded strictly: every key must match).",
)
@click.option("--random-init", is_flag=True, help="Random weights, for benchmarks; the file says so.")
@click.option("--seed", type=int, default=0, help="Seed of --random-init.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True)
@click.option("--height", type=click.IntRange(min=32), default=480, help="Input height of a fixed-size file.")
@click.option("--width", type=click.IntRange(min=32), default=640, help="Input width of a fixed-size file.")
@click.option("--dynamic-hw", is_flag=True, help="Any input size (slower to optimise for engines).")
@click.option("--fp16", is_flag=True, help="Float16 weights and compute (inputs and outputs stay float32).")
@click.option("--check-batch", type=click.IntRange(min=1), default=2, help="Batch of the ORT-vs-PyTorch self-check.")
@click.option(
    "--merge-heads/--separate-heads",
    default=True,
    help="Compute the two prediction heads as one (same numbers, half the GPU kernels), or keep "
    "the official layout of two.",
)
def export_mogface(
    variant: str,
    checkpoint: Path | None,
    random_init: bool,
    seed: int,
    out: Path,
    height: int,
    width: int,
    dynamic_hw: bool,
    fp16: bool,
    check_batch: int,
    merge_heads: bool,
) -> None:
    """Export MogFace to ONNX (dynamic batch, opset 17) and check it against PyTorch."""
    if (checkpoint is None) == (not random_init):
        raise click.UsageError("give exactly one of --checkpoint FILE and --random-init")
    _need_torch()
    from facestream.detector_service.models.mogface_torch import weights
    from facestream.detector_service.models.mogface_torch.net import MogFace
    from facestream.tools.export.onnx_export import ExportSpec, export, self_check

    model = MogFace(variant)
    if checkpoint is None:  # --random-init (checked above: exactly one of the two)
        digest = weights.randomise(model, seed)
        click.echo("WARNING: random weights: this file is for benchmarks only and detects nothing", err=True)
    else:
        digest = weights.load_official(model, checkpoint)
        click.echo(f"loaded {checkpoint} strictly ({len(model.state_dict())} keys, sha256 {digest[:16]}...)", err=True)
    if merge_heads:
        from facestream.detector_service.models.mogface_torch.merge_heads import merge_heads as merge

        merge(model)
    spec = ExportSpec(height=height, width=width, dynamic_hw=dynamic_hw, fp16=fp16)
    started = time.monotonic()
    export(model, out, spec, digest, random_weights=random_init)
    click.echo(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB) in {time.monotonic() - started:.0f} s", err=True)
    diffs = self_check(model, out, check_batch, height, width)
    tolerance = 5e-2 if fp16 else 1e-3
    verdict = "OK" if all(d <= tolerance for d in diffs.values()) else "MISMATCH"
    click.echo(
        f"self-check {verdict}: ONNX Runtime vs PyTorch (fp32), random batch of {check_batch} at {width}x{height}: "
        + ", ".join(f"max |d {k}| {v:.2e}" for k, v in diffs.items())
    )
    if verdict != "OK":
        raise click.exceptions.Exit(1)


@export.command(
    "flops",
    epilog="\b\nExamples:\n  facestream export flops\n"
    "  facestream export flops --variant mogface_e --height 1080 --width 1920",
)
@click.option("--variant", type=click.Choice(VARIANT_CHOICES), default="mogface")
@click.option("--height", type=click.IntRange(min=32), default=480)
@click.option("--width", type=click.IntRange(min=32), default=640)
def export_flops(variant: str, height: int, width: int) -> None:
    """Print FLOPs per image (2 x MAC, convolutions that run) and parameter counts."""
    _need_torch()
    from facestream.detector_service.models.mogface_torch.net import MogFace
    from facestream.tools.export.flops import measure

    cost = measure(MogFace(variant), height, width)
    parts = ", ".join(f"{name} {flops / 1e9:.1f}" for name, flops in cost.flops.items())
    click.echo(f"{variant} at {width}x{height}: {cost.total_flops / 1e9:.1f} GFLOPs ({parts})")
    click.echo(f"parameters: {cost.params_total / 1e6:.1f} M in the checkpoint, {cost.params_used / 1e6:.1f} M used")


@export.command(
    "fp16",
    epilog="\b\nExamples:\n"
    "  facestream export fp16 ~/.facestream/models/yunet-2023mar-dynamic.onnx --out yunet-fp16.onnx\n"
    "  facestream export fp16 mogface.onnx --out mogface-fp16.onnx --provider cuda\n"
    "  facestream export fp16 ~/.facestream/models/movenet-multipose-lightning.onnx --out movenet-fp16.onnx",
)
@click.argument("source", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True)
@click.option("--provider", type=click.Choice(["cpu", "cuda"]), default="cpu", help="Where to run the check.")
def export_fp16(source: Path, out: Path, provider: str) -> None:
    """Convert a facestream model file to float16 and check it finds the same faces (or people) on real photos."""
    import onnx

    from facestream.detector_service.models import float16_copy, plugin_for, read_metadata
    from facestream.tools.export import fp16

    onnx.save(float16_copy(source), str(out))
    agreement = fp16.compare_on_photos(source, out, provider)
    finds = plugin_for(read_metadata(source), str(source)).finds  # "faces" or "people"
    click.echo(
        f"wrote {out}; on {agreement.images} real photos: float32 {agreement.faces_fp32} {finds}, float16 "
        f"{agreement.faces_fp16}, {agreement.matched} matched at IoU >= {fp16.MATCH_IOU}, "
        f"max score difference {agreement.max_score_diff:.4f}"
    )
    if not agreement.same_faces:
        raise click.ClickException(f"the float16 model does not find the same {finds}: do not deploy it")
