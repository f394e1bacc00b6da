"""Where the milliseconds go: GPU time per kernel family, for the engine's graphs and for torch.compile.

Kernel times come from CUPTI through ``torch.profiler``, which records every kernel the process
launches, ONNX Runtime's included, with its time on the GPU. (ONNX Runtime's own per-node profile
times CUDA kernels at launch, not on the GPU, so it cannot say which op is slow.) Variants: the
exported graph as ORT runs it by default, the engine's (fused GroupNorm, convolution biases fused
into the convolutions) and, for MogFace, ``torch.compile`` on the same weights and the PyTorch
engine's module as ``build-engine`` compiles it, with and without its fused convolutions. CUDA graphs
stay off so every kernel is visible; the ONNX variants must agree.
"""

import copy
import re
import statistics
import sys
import time
from collections import defaultdict
from dataclasses import replace
from typing import Any

import numpy as np

from bench import save
from bench.engine import _model_file, _progress, torch_baseline
from bench.figures import source
from bench.machine import describe
from bench.settings import EngineBenchConfig
from facestream.detector_service import models
from facestream.detector_service.inference import runtime
from facestream.detector_service.inference.engine import load_graph
from facestream.detector_service.models import graph_rewrite
from facestream.detector_service.models.graph_rewrite import IMAGE_INPUT

# Kernel name -> family, first match wins. cuDNN/CUTLASS convolution kernels carry many names.
FAMILIES = (
    ("triton (fused by Inductor)", r"^triton_"),
    ("bias add (cuDNN OpTensor)", r"op_generic_tensor"),
    ("group norm", r"group_?norm|groupnorm"),
    ("instance / batch norm", r"instance|welford|bn_fw|batch_norm|layer_?norm"),
    ("convolution", r"conv|gemm|xmma|cutlass|implicit|fprop|nvjet|sm\d\d_"),
    ("layout (transpose)", r"transpose|nchw|nhwc|permute"),
    ("memcpy", r"memcpy|memset"),
    ("top-k / gather", r"topk|sort|radix|gather|scan"),
    ("elementwise (relu, add, mul, cast)", r"elementwise|relu|add|mul|cast|vectorized|unrolled|binary|unary|_impl"),
)
WARM, RUNS = 3, 10


def family(kernel: str) -> str:
    lowered = kernel.lower()
    return next((name for name, pattern in FAMILIES if re.search(pattern, lowered)), "other")


def run(cfg: EngineBenchConfig, batch: int, command: str) -> dict:
    torch_model, path, flops = _model_file(cfg, cfg.merge_heads)
    selection = runtime.select(cfg.provider)
    plan = runtime.SessionPlan(input_name=IMAGE_INPUT, input_shape=(batch, cfg.height, cfg.width, 3))
    plugin = models.plugin_for(models.read_metadata(path), str(path))
    model = load_graph(path, plugin, adapt=False)
    exported = model.SerializeToString()
    fused = graph_rewrite.fuse_group_norm(model)
    # The exported graph as ORT runs it by default (a separate pass adds each convolution's bias), then
    # the engine's: GroupNorm fused and biases added inside the convolutions (``fuse_conv_bias``).
    variants = {
        "exported": (exported, replace(plan, fuse_conv_bias=False)),
        f"fused_groupnorm_x{fused}_conv_bias": (model.SerializeToString(), plan),
    }
    x = np.random.default_rng(1).integers(0, 256, (batch, cfg.height, cfg.width, 3), dtype=np.uint8)
    result: dict[str, Any] = {
        "benchmark": "profile",
        "command": command,
        "machine": describe(),
        "model_file": path.name,
        "batch": batch,
        "variants": {},
    }
    outputs = {}
    for name, (graph, variant_plan) in variants.items():
        _progress(f"{name}:")
        session = runtime.open_session(path, selection, variant_plan, graph=graph)[0]
        outputs[name] = [o.astype(np.float32) for o in session.run(None, {IMAGE_INPUT: x})]
        result["variants"][name] = _kernels(lambda s=session: s.run(None, {IMAGE_INPUT: x}), batch)
        del session
    if torch_model is not None and cfg.precision == "fp16":
        _progress("torch_compile:")
        result["variants"]["torch_compile"] = _kernels(_compiled(copy.deepcopy(torch_model), cfg, batch), batch)
        for name, fuse in (("torch_engine_quick", True), ("torch_engine_quick_unfused_convs", False)):
            _progress(f"{name}:")
            step = _torch_engine(copy.deepcopy(torch_model), plugin, cfg, batch, fuse)
            result["variants"][name] = _kernels(step, batch)
    first, *others = outputs.values()
    result["max_abs_diff_between_variants"] = max(
        float(np.abs(a - b).max()) for other in others for a, b in zip(first, other)
    )
    if flops is not None:
        result["gflops_per_image"] = round(flops / 1e9, 1)
    _progress(f"max |exported - rewritten| = {result['max_abs_diff_between_variants']:.3g}")
    save(result, cfg.result_file)
    return result


def _compiled(model, cfg: EngineBenchConfig, batch: int):
    import torch

    runner, x = torch_baseline(model, cfg, batch, "default")

    def step() -> None:
        with torch.inference_mode():
            runner(x)
        torch.cuda.synchronize()

    return step


def _torch_engine(model, plugin, cfg: EngineBenchConfig, batch: int, fuse: bool):
    """The PyTorch engine's module as ``build-engine`` compiles it by default (``quick``: GroupNorms as
    per-channel sums, uint8 in, top candidates out; with ``fuse``, the backbone's convolutions fused
    with what follows them, as the engine runs), at a static batch and without CUDA graphs, so that
    every kernel is seen."""
    import torch

    from facestream.detector_service.inference.torch_engine import QUICK, served_module
    from facestream.detector_service.models import mogface

    served = served_module(model, plugin.input_transform, mogface.TOP_K, fuse)
    options: dict[str, Any] = {name: value for name, value in QUICK.items() if name != "triton.cudagraphs"}
    compiled = torch.compile(served, options=options, dynamic=False)
    x = torch.randint(0, 256, (batch, cfg.height, cfg.width, 3), dtype=torch.uint8, device="cuda")

    def step() -> None:
        with torch.inference_mode():
            compiled(x)
        torch.cuda.synchronize()

    return step


def _kernels(step, batch: int) -> dict:
    """Wall ms per batch (median) and GPU ms per batch by kernel family and by kernel, over RUNS runs."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    for _ in range(WARM):  # cuDNN's algorithm search and Inductor's compile happen here
        step()
    walls = []
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(RUNS):
            start = time.perf_counter()
            step()
            walls.append((time.perf_counter() - start) * 1000.0)
        torch.cuda.synchronize()
    by_kernel: dict[str, float] = defaultdict(float)
    for event in prof.events():
        if event.device_type == torch.autograd.DeviceType.CUDA:
            by_kernel[event.name] += event.device_time / 1000.0 / RUNS  # µs over all runs -> ms per run
    by_family: dict[str, float] = defaultdict(float)
    for kernel, ms in by_kernel.items():
        by_family[family(kernel)] += ms
    gpu_ms = sum(by_kernel.values())
    top = sorted(by_kernel.items(), key=lambda kv: -kv[1])[:15]
    profile_ = {
        "ms_per_batch": round(statistics.median(walls), 3),
        "gpu_ms_per_batch": round(gpu_ms, 3),
        "gpu_ms_by_family": {k: round(v, 3) for k, v in sorted(by_family.items(), key=lambda kv: -kv[1])},
        "top_kernels_ms": {k[:120]: round(v, 3) for k, v in top},
    }
    _report(profile_, batch)
    return profile_


def _report(profile_: dict, batch: int) -> None:
    _progress(
        f"  wall {profile_['ms_per_batch']:.2f} ms/batch of {batch}, GPU busy {profile_['gpu_ms_per_batch']:.2f} ms"
    )
    for name, ms in profile_["gpu_ms_by_family"].items():
        _progress(f"    {name:<36} {ms:8.2f} ms  {100 * ms / max(profile_['gpu_ms_per_batch'], 1e-9):5.1f}%")
    for name, ms in list(profile_["top_kernels_ms"].items())[:8]:
        _progress(f"      {ms:7.2f} ms  {name[:100]}")
    print(file=sys.stderr, flush=True)


def render(result: dict) -> list[str]:
    lines = [
        f"**Where the milliseconds go** (`{result['command']}`, CUDA graphs off, GPU time per batch of "
        f"{result['batch']} from CUPTI kernel records; the ONNX variants agree within "
        f"{result['max_abs_diff_between_variants']:.3g}):",
        "",
        "| variant | wall ms | GPU ms | largest kernel families (GPU ms) |",
        "|---|---|---|---|",
    ]
    for name, v in result["variants"].items():
        families = ", ".join(f"{k} {ms:.1f}" for k, ms in list(v["gpu_ms_by_family"].items())[:4])
        lines.append(f"| {name} | {v['ms_per_batch']:.1f} | {v['gpu_ms_per_batch']:.1f} | {families} |")
    return lines + ["", source(result)]
