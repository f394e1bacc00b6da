"""MogFace -> ONNX with a dynamic batch axis, facestream's metadata, and a self-check against PyTorch.

The metadata makes the file self-describing for the detector service: which plugin decodes it
(``facestream.model``), which variant and weights made it, what input size it accepts, how to
preprocess, which tool wrote it, and whether its weights are random (benchmarks only).
"""

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from facestream import __version__
from facestream.detector_service.models import mogface as plugin
from facestream.detector_service.models.base import (
    META_INPUT,
    META_MODEL,
    META_PRECISION,
    META_RANDOM,
    META_VERSION,
    META_WEIGHTS,
    float16,
)
from facestream.detector_service.models.mogface_torch.net import MogFace

OPSET = 17
INPUT, OUTPUTS = "input", ("scores", "deltas")


@dataclass(frozen=True)
class ExportSpec:
    height: int = 480
    width: int = 640
    dynamic_hw: bool = False
    fp16: bool = False
    opset: int = OPSET


def export(model: MogFace, out: Path, spec: ExportSpec, weights_sha256: str, random_weights: bool) -> None:
    """Write ``out``; the batch axis is always dynamic, H and W only with ``spec.dynamic_hw``."""
    import onnx

    model.eval()
    axes = {INPUT: {0: "batch"}, OUTPUTS[0]: {0: "batch"}, OUTPUTS[1]: {0: "batch"}}
    if spec.dynamic_hw:
        axes[INPUT].update({2: "height", 3: "width"})
        axes[OUTPUTS[0]][1] = axes[OUTPUTS[1]][1] = "anchors"
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "model.onnx"
        torch.onnx.export(
            model,
            (torch.zeros(1, 3, spec.height, spec.width),),
            str(raw),
            input_names=[INPUT],
            output_names=list(OUTPUTS),
            dynamic_axes=axes,
            opset_version=spec.opset,
            do_constant_folding=True,
            dynamo=False,
        )
        graph = onnx.load(str(raw))
    if spec.fp16:
        graph = float16(graph)  # inputs and outputs stay float32
    metadata = {
        META_MODEL: plugin.MogFace.name,
        META_VERSION: model.variant.name,
        META_WEIGHTS: weights_sha256,
        META_INPUT: "dynamic" if spec.dynamic_hw else f"{spec.width}x{spec.height}",
        META_RANDOM: "true" if random_weights else "false",
        META_PRECISION: "fp16" if spec.fp16 else "fp32",
        "facestream.preprocess": json.dumps(
            {
                "channel_order_in": "BGR",
                "mean_bgr": plugin.MEAN_BGR.tolist(),
                "std_bgr": plugin.STD_BGR.tolist(),
                "then_divide_by": 255,
                "channel_order_out": "RGB",
                "layout": "NCHW",
            }
        ),
        "facestream.exporter": f"facestream {__version__}, torch {torch.__version__}, opset {spec.opset}",
    }
    del graph.metadata_props[:]
    for key, value in metadata.items():
        entry = graph.metadata_props.add()
        entry.key, entry.value = key, value
    out.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(graph, str(out))


def self_check(model: MogFace, path: Path, batch: int, height: int, width: int, seed: int = 0) -> dict[str, float]:
    """Max |ONNX Runtime - PyTorch| per output on one random batch (CPU, float32 PyTorch)."""
    import onnxruntime as ort

    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(batch, 3, height, width, generator=generator)
    with torch.no_grad():
        expected = [t.numpy() for t in model.eval()(x)]
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    got = session.run(list(OUTPUTS), {INPUT: x.numpy()})
    return {name: float(np.abs(g.astype(np.float32) - e).max()) for name, g, e in zip(OUTPUTS, got, expected)}
