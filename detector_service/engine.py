"""Inference at a few fixed batch sizes ("buckets"), so each shape gets its own optimised plan.

On a GPU every bucket has its own session with a static batch: ONNX Runtime folds the shape
arithmetic into constants (no CPU-side shape ops, no Memcpy nodes), TensorRT gets an exact profile,
and the CUDA provider captures a CUDA graph over preallocated device buffers bound once (IO
binding). A partial batch is padded with zeros to the next bucket and its padding is dropped from
the outputs. On the CPU one dynamic session serves every size: padding would only cost time there.
"""

import logging
from pathlib import Path

import numpy as np

from detector_service import graph_rewrite, runtime
from detector_service.runtime import SessionPlan
from facestream.errors import ConfigError

log = logging.getLogger(__name__)

DEFAULT_BUCKETS = (1, 4, 8, 16, 32)
# Largest output change a rewrite may make, relative to the output's scale (FP16 graphs round more).
REWRITE_TOLERANCE = 1e-2


def buckets_for(batch: int, candidates: tuple[int, ...] = DEFAULT_BUCKETS) -> tuple[int, ...]:
    """The candidate sizes below ``batch``, and ``batch`` itself (the largest a poll can bring)."""
    if batch < 1:
        raise ConfigError(f"batch must be >= 1, got {batch}")
    return tuple(sorted({b for b in candidates if b < batch} | {batch}))


def bucket_of(count: int, buckets: tuple[int, ...]) -> int:
    for bucket in buckets:
        if count <= bucket:
            return bucket
    raise ValueError(f"{count} frames exceed the largest bucket {buckets[-1]}")


class Engine:
    """Runs a model file on the best provider the chain allows, at any batch up to ``batch``."""

    def __init__(
        self,
        path: Path,
        input_hw: tuple[int, int],
        batch: int,
        provider: str = "auto",
        threads: int = 0,
        buckets: tuple[int, ...] | None = None,
        cuda_graphs: bool = True,
        trt_fp16: bool = True,
    ) -> None:
        self.path = path
        selection = runtime.select(provider)
        self.on_gpu = selection.names[0] != "cpu"
        self.buckets = buckets_for(batch, buckets or DEFAULT_BUCKETS) if self.on_gpu else (batch,)
        self._runners: dict[int, object] = {}
        if not self.on_gpu:
            session, self.provider, self.fallbacks = runtime.open_session(
                path, selection, SessionPlan(input_name="", input_shape=None, threads=threads)
            )
            self.input_name = session.get_inputs()[0].name
            self._cpu_session = session
        else:
            self._open_gpu(selection, input_hw, cuda_graphs, trt_fp16)
        runtime.report(self.provider, self.fallbacks)

    def _open_gpu(self, selection, input_hw: tuple[int, int], cuda_graphs: bool, trt_fp16: bool) -> None:
        # Output shapes come from one plain run at batch 1: the graphed sessions need their
        # output buffers allocated before their first run, which is when they capture.
        probe_plan = SessionPlan(input_name="", input_shape=(1, 3, *input_hw))
        probe, self.provider, self.fallbacks = runtime.open_session(self.path, selection, probe_plan)
        self.input_name = probe.get_inputs()[0].name
        dtype = _numpy_dtype(probe.get_inputs()[0].type)
        sample = np.random.default_rng(0).uniform(-1, 1, (1, 3, *input_hw)).astype(dtype)
        reference = probe.run(None, {self.input_name: sample})
        per_image = {o.name: (v.shape[1:], v.dtype) for o, v in zip(probe.get_outputs(), reference)}
        del probe
        self.graph = self._rewritten(selection, probe_plan, sample, reference) if self.provider == "cuda" else None
        shapes = tuple((b, 3, *input_hw) for b in self.buckets)
        cache = runtime.engine_cache_dir(self.path) if "tensorrt" in selection.names else None
        graphs = cuda_graphs and self.provider == "cuda"
        for shape in shapes:
            plan = SessionPlan(input_name=self.input_name, input_shape=shape, profiles=shapes, cache_dir=cache,
                               trt_fp16=trt_fp16, cuda_graph=graphs)  # fmt: skip
            session, _, _ = runtime.open_session(self.path, selection, plan, graph=self.graph)
            self._runners[shape[0]] = _BoundRunner(session, self.input_name, shape, dtype, per_image)
        log.info("engine: %s, buckets %s, CUDA graphs %s", self.provider, list(self.buckets), "on" if graphs else "off")

    def run(self, tensor: np.ndarray) -> dict[str, np.ndarray]:
        """Outputs by name for ``tensor`` (N, C, H, W), any N up to the largest bucket."""
        if not self.on_gpu:
            names = [o.name for o in self._cpu_session.get_outputs()]
            return dict(zip(names, self._cpu_session.run(names, {self.input_name: tensor})))
        count = len(tensor)
        bucket = bucket_of(count, self.buckets)
        if count < bucket:
            padded = np.zeros((bucket, *tensor.shape[1:]), dtype=tensor.dtype)
            padded[:count] = tensor
            tensor = padded
        return {name: value[:count] for name, value in self._runners[bucket](tensor).items()}


    def _rewritten(self, selection, plan: SessionPlan, sample: np.ndarray, reference: list) -> bytes | None:
        """The graph with CUDA-friendly rewrites, if they apply and reproduce ``reference``; else None."""
        import onnx

        model = onnx.load(str(self.path))
        fused = graph_rewrite.fuse_group_norm(model)
        if not fused:
            return None
        graph = model.SerializeToString()
        try:
            session, _, _ = runtime.open_session(self.path, selection, plan, graph=graph)
            got = session.run(None, {self.input_name: sample})
        except Exception as exc:  # an op this ORT build cannot run: keep the exported graph, loudly
            log.warning("graph rewrite (fused GroupNorm x%d) unusable here, running the exported graph: %s", fused, exc)
            return None
        diff = max(float(np.abs(g.astype(np.float32) - r.astype(np.float32)).max()) for g, r in zip(got, reference))
        scale = max(1.0, max(float(np.abs(r).max()) for r in reference))
        if diff > REWRITE_TOLERANCE * scale:
            log.warning("graph rewrite changed outputs by %.3g (> %.0e): running the exported graph", diff,
                        REWRITE_TOLERANCE)  # fmt: skip
            return None
        log.info("graph rewrite: %d GroupNorm patterns fused (outputs within %.2g of the exported graph)", fused, diff)
        return graph

    def replay(self, batch: int) -> None:
        """Run bucket ``batch`` on whatever its device buffers hold, outputs left on the device.

        For benchmarks: the time of the engine alone, without host copies (``run`` loads one first).
        """
        runner = self._runners[batch]
        runner.session.run_with_iobinding(runner.binding)


class _BoundRunner:
    """One static-shape GPU session with its input and outputs bound to fixed device buffers."""

    def __init__(self, session, input_name: str, shape: tuple[int, ...], dtype, per_image: dict) -> None:
        import onnxruntime as ort

        self.session = session
        self.input = ort.OrtValue.ortvalue_from_shape_and_type(shape, dtype, "cuda", 0)
        self.outputs = {name: ort.OrtValue.ortvalue_from_shape_and_type((shape[0], *rest), out_dtype, "cuda", 0)
                        for name, (rest, out_dtype) in per_image.items()}  # fmt: skip
        self.binding = session.io_binding()
        self.binding.bind_ortvalue_input(input_name, self.input)
        for name, value in self.outputs.items():
            self.binding.bind_ortvalue_output(name, value)

    def __call__(self, tensor: np.ndarray) -> dict[str, np.ndarray]:
        self.input.update_inplace(np.ascontiguousarray(tensor))
        self.session.run_with_iobinding(self.binding)
        return {name: value.numpy() for name, value in self.outputs.items()}


def _numpy_dtype(onnx_type: str):
    return {"tensor(float)": np.float32, "tensor(float16)": np.float16, "tensor(uint8)": np.uint8}[onnx_type]
