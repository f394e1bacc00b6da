"""Where the milliseconds go: ONNX Runtime's per-node profile of the engine's graph, by operator type.

Profiles the exported graph and the CUDA-rewritten one (fused GroupNorm) at one static batch, with
CUDA graphs off (a graph replay hides its nodes from the profiler), and checks that the two agree.
"""

import json
import os
import tempfile
from collections import defaultdict
from pathlib import Path

import numpy as np

from bench.engine import EngineBenchConfig, _model_file, _progress
from bench.machine import describe
from detector_service import graph_rewrite, models, runtime
from detector_service.engine import load_graph
from detector_service.graph_rewrite import IMAGE_INPUT


def run(cfg: EngineBenchConfig, batch: int, command: str) -> dict:
    _, path, flops = _model_file(cfg)
    selection = runtime.select(cfg.provider)
    plan = runtime.SessionPlan(input_name=IMAGE_INPUT, input_shape=(batch, cfg.height, cfg.width, 3))
    model = load_graph(path, models.plugin_for(models.read_metadata(path), str(path)), adapt=False)
    exported = model.SerializeToString()
    fused = graph_rewrite.fuse_group_norm(model)
    variants = {"exported": exported, f"fused_groupnorm_x{fused}": model.SerializeToString()}
    x = np.random.default_rng(1).integers(0, 256, (batch, cfg.height, cfg.width, 3), dtype=np.uint8)
    result = {"benchmark": "profile", "command": command, "machine": describe(), "model_file": path.name,
              "batch": batch, "variants": {}}  # fmt: skip
    outputs = {}
    for name, graph in variants.items():
        profile, outputs[name] = _profile(path, graph, selection, plan, x)
        result["variants"][name] = profile
        _progress(f"{name}: {profile['ms_per_batch']:.2f} ms/batch of {batch} ({profile['ms_per_batch'] / batch:.3f} ms/img)")
        for op, ms in list(profile["ms_by_op"].items())[:10]:
            _progress(f"    {op:<28} {ms:8.2f} ms  {100 * ms / profile['kernel_ms']:5.1f}%")
    first, second = outputs.values()
    result["max_abs_diff_between_variants"] = max(float(np.abs(a - b).max()) for a, b in zip(first, second))
    if flops is not None:
        result["gflops_per_image"] = round(flops / 1e9, 1)
    _progress(f"max |exported - rewritten| = {result['max_abs_diff_between_variants']:.3g}")
    cfg.out.parent.mkdir(parents=True, exist_ok=True)
    cfg.out.write_text(json.dumps(result, indent=2) + "\n")
    return result


def _profile(path: Path, graph: bytes, selection, plan, x: np.ndarray) -> tuple[dict, list]:
    warm, runs = 3, 10
    with tempfile.TemporaryDirectory() as tmp:
        session = _profiled_session(path, graph, selection, plan, Path(tmp))
        name = session.get_inputs()[0].name
        outputs = [o.astype(np.float32) for o in session.run(None, {name: x})]
        for _ in range(warm + runs - 1):
            session.run(None, {name: x})
        trace = json.loads(Path(session.end_profiling()).read_text())
    # Only the timed runs count: the first ones hold cuDNN's algorithm search.
    model_runs = sorted((e for e in trace if e.get("cat") == "Session" and e.get("name") == "model_run"),
                        key=lambda e: e["ts"])  # fmt: skip
    start = model_runs[warm]["ts"]
    by_op: dict[str, float] = defaultdict(float)
    for event in trace:
        if event.get("cat") == "Node" and event.get("name", "").endswith("_kernel_time") and event["ts"] >= start:
            by_op[event["args"].get("op_name", "?")] += event["dur"] / 1000.0
    ordered = dict(sorted(((op, round(ms / runs, 3)) for op, ms in by_op.items()), key=lambda kv: -kv[1]))
    profile = {
        "ms_per_batch": round(float(np.median([e["dur"] / 1000.0 for e in model_runs[warm:]])), 3),
        "kernel_ms": round(sum(by_op.values()) / runs, 3),
        "ms_by_op": ordered,
    }
    return profile, outputs


def _profiled_session(path: Path, graph: bytes, selection, plan, folder: Path):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.add_free_dimension_override_by_name("batch", plan.input_shape[0])
    options.enable_profiling = True
    options.profile_file_prefix = os.path.join(folder, "profile")
    options.log_severity_level = 3
    providers = [(runtime.CHAIN[n], runtime.provider_options(n, plan)) for n in selection.names]
    return ort.InferenceSession(graph, options, providers=providers)
