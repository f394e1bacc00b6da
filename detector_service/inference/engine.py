"""Inference at a few fixed batch sizes ("buckets"), so each shape gets its own optimised plan.

Every engine graph takes uint8 NHWC BGR images: the model's normalisation is built into it
(``graph_rewrite.embed_preprocessing``). On a GPU every bucket has its own session with a static
batch: ONNX Runtime folds the shape arithmetic into constants (no CPU-side shape ops, no Memcpy
nodes), TensorRT gets an exact profile, and the CUDA provider captures a CUDA graph over
preallocated device buffers bound once (IO binding); CUDA sessions also get the fused GroupNorm,
checked against the exported graph at start. A partial batch is padded with zeros to the next
bucket and its padding is dropped from the outputs. On the CPU one dynamic session serves every
size: padding would only cost time there.
"""

import importlib.util
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from facestream.detector_service.inference import runtime
from facestream.detector_service.inference.runtime import SessionPlan
from facestream.detector_service.models import graph_rewrite
from facestream.detector_service.models.base import GraphPlugin
from facestream.errors import ModelError

log = logging.getLogger(__name__)

DEFAULT_BUCKETS = (1, 4, 8, 16, 32)
# ORT captures a session's CUDA graph on its third run. It must happen here, at start: a capture is
# global to the process, and one taken while another thread decodes JPEGs on the GPU fails both.
# ORT keeps the graphs per host thread (the CUDA provider's per-thread context), so a graph captured
# on one thread is captured again by the third run from any other: every GPU run of an engine, these
# included, happens on the engine's own thread.
CAPTURE_RUNS = 3
# Largest output change a rewrite may make, relative to the output's scale (FP16 graphs round more).
REWRITE_TOLERANCE = 1e-2


def buckets_for(batch: int, candidates: tuple[int, ...] = DEFAULT_BUCKETS) -> tuple[int, ...]:
    """The candidate sizes below ``batch``, and ``batch`` itself (the largest a poll can bring)."""
    return tuple(sorted({b for b in candidates if b < batch} | {batch}))


def bucket_of(count: int, buckets: tuple[int, ...]) -> int:
    for bucket in buckets:
        if count <= bucket:
            return bucket
    raise ValueError(f"{count} frames exceed the largest bucket {buckets[-1]}")


def load_graph(path: Path, plugin: GraphPlugin, adapt: bool = True):
    """The model file as an ONNX ModelProto with the plugin's preprocessing built in (uint8 image
    input) and, with ``adapt``, whatever the plugin appends (e.g. keeping only the best candidates)."""
    import onnx

    try:
        model = onnx.load(str(path))
    except Exception as exc:  # protobuf and onnx raise several types for a file that is not a model
        raise ModelError(f"ONNX Runtime cannot load {path}: not a readable ONNX file ({exc})") from None
    graph_rewrite.embed_preprocessing(model, plugin.input_transform)
    if adapt:
        plugin.adapt_graph(model)
    return model


class InferenceEngine(Protocol):
    """What the processor needs of an engine: this module's ``Engine`` (ONNX Runtime) or the
    ``TorchEngine``. Every GPU call runs on ``thread``."""

    path: Path
    provider: str
    on_gpu: bool
    input_hw: tuple[int, int]
    batch: int
    buckets: tuple[int, ...]
    fallbacks: list[str]
    thread: ThreadPoolExecutor

    def run(self, images, floor: float | None = None) -> dict[str, np.ndarray]: ...
    def replay(self, batch: int) -> None: ...
    def close(self) -> None: ...


class OwnThread:
    """The one thread an engine runs its GPU work on (see CAPTURE_RUNS); callers may submit to it."""

    def __init__(self) -> None:
        self.thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="engine")
        self._thread_id = self.thread.submit(threading.get_ident).result()

    def close(self) -> None:
        self.thread.shutdown(wait=True)

    def _on_thread(self, fn, *args):
        """``fn(*args)`` on the engine's thread: directly when already there, else handed over."""
        if threading.get_ident() == self._thread_id:
            return fn(*args)
        return self.thread.submit(fn, *args).result()


class Engine(OwnThread):
    """Runs a model file on the best provider the chain allows, at any batch up to ``batch``."""

    def __init__(
        self,
        path: Path,
        input_hw: tuple[int, int],
        batch: int,
        plugin: GraphPlugin,
        provider: str = "auto",
        threads: int = 0,
        buckets: tuple[int, ...] | None = None,
        cuda_graphs: bool = True,
        trt_fp16: bool = True,
        cuda_options: tuple[tuple[str, str], ...] = (),
    ) -> None:
        self.path = path
        self.input_hw = input_hw
        self.batch = batch  # the most images one run() takes
        self.plugin = plugin
        selection = runtime.select(provider)
        self.on_gpu = selection.names[0] != "cpu"
        self.buckets = buckets_for(batch, buckets or DEFAULT_BUCKETS) if self.on_gpu else (batch,)
        self._runners: dict[int, _BoundRunner] = {}
        super().__init__()
        if not self.on_gpu:
            self.onnx_model = load_graph(path, plugin)
            plan = SessionPlan(input_name=graph_rewrite.IMAGE_INPUT, input_shape=None, threads=threads)
            self._cpu_session, self.provider, self.fallbacks = runtime.open_session(
                path, selection, plan, graph=self.onnx_model.SerializeToString()
            )
        else:
            self._open_gpu(selection, cuda_graphs, trt_fp16, cuda_options)
        runtime.report(self.provider, self.fallbacks)
        # Copying only the candidates that can pass reads the bound outputs on the device, with CuPy.
        self.ranked_by = plugin.ranked_by if self.on_gpu and importlib.util.find_spec("cupy") else None
        if self.on_gpu and plugin.ranked_by is not None and self.ranked_by is None:
            log.warning("FALLBACK: CuPy is not installed (the gpu extra): every candidate comes to the host")

    def _open_gpu(self, selection, cuda_graphs: bool, trt_fp16: bool, cuda_options: tuple) -> None:
        # Rewrites are checked on the model's own outputs (before the plugin appends anything), then
        # the chosen graph is adapted; output shapes come from one plain run of it at batch 1, since
        # the graphed sessions need their output buffers before their first run (the capture).
        started = time.perf_counter()
        probe_plan = SessionPlan(
            input_name=graph_rewrite.IMAGE_INPUT, input_shape=(1, *self.input_hw, 3), cuda_options=cuda_options
        )
        base = load_graph(self.path, self.plugin, adapt=False)
        probe, self.provider, self.fallbacks = runtime.open_session(
            self.path, selection, probe_plan, graph=base.SerializeToString()
        )
        sample = np.random.default_rng(0).integers(0, 256, (1, *self.input_hw, 3), dtype=np.uint8)
        reference = probe.run(None, {graph_rewrite.IMAGE_INPUT: sample})
        del probe
        self.onnx_model = (
            self._rewritten(base, selection, probe_plan, sample, reference) if self.provider == "cuda" else None
        ) or base
        self.plugin.adapt_graph(self.onnx_model)
        graph = self.onnx_model.SerializeToString()
        probe, _, _ = runtime.open_session(self.path, selection, probe_plan, graph=graph)
        outputs = probe.run(None, {graph_rewrite.IMAGE_INPUT: sample})
        per_image = {o.name: (v.shape[1:], v.dtype) for o, v in zip(probe.get_outputs(), outputs)}
        del probe
        log.info(
            "engine: graph checked and adapted in %.1f s; building %d bucket(s) %s",
            time.perf_counter() - started,
            len(self.buckets),
            list(self.buckets),
        )
        shapes = tuple((b, *self.input_hw, 3) for b in self.buckets)
        cache = runtime.engine_cache_dir(self.path) if "tensorrt" in selection.names else None
        graphs = cuda_graphs and self.provider == "cuda"
        for shape in shapes:
            bucket_started = time.perf_counter()
            plan = SessionPlan(
                input_name=graph_rewrite.IMAGE_INPUT,
                input_shape=shape,
                profiles=shapes,
                cache_dir=cache,
                trt_fp16=trt_fp16,
                cuda_graph=graphs,
                cuda_options=cuda_options,
            )
            self._runners[shape[0]] = self._bound(selection, plan, graph, per_image)
            log.info("engine: bucket %d ready in %.1f s", shape[0], time.perf_counter() - bucket_started)
        log.info("engine: %s, buckets %s, CUDA graphs %s", self.provider, list(self.buckets), "on" if graphs else "off")

    def _bound(self, selection, plan: SessionPlan, graph: bytes, per_image: dict) -> "_BoundRunner":
        """A bucket's bound session, run until its CUDA graph is captured; if that fails, without a graph
        and with a warning."""
        shape = plan.input_shape
        assert shape is not None  # a bucket's plan has every size fixed
        try:
            session, _, _ = runtime.open_session(self.path, selection, plan, graph=graph)
            runner = _BoundRunner(session, shape, per_image)
            for _ in range(CAPTURE_RUNS):
                self._on_thread(runner, np.zeros(shape, dtype=np.uint8))
            return runner
        except Exception as exc:  # ORT refuses to capture some graphs (e.g. a node left on the CPU)
            if not plan.cuda_graph:
                raise
            log.warning("CUDA graph capture failed for batch %d, running it without a graph: %s", shape[0], exc)
        session, _, _ = runtime.open_session(self.path, selection, replace(plan, cuda_graph=False), graph=graph)
        return _BoundRunner(session, shape, per_image)

    def _rewritten(self, base, selection, plan: SessionPlan, sample: np.ndarray, reference: list):
        """A copy of ``base`` with CUDA-friendly fusions, if they apply and reproduce ``reference``; else None."""
        model = type(base)()
        model.CopyFrom(base)
        fused = graph_rewrite.fuse_group_norm(model)
        if not fused:
            return None
        try:
            session, _, _ = runtime.open_session(self.path, selection, plan, graph=model.SerializeToString())
            got = session.run(None, {graph_rewrite.IMAGE_INPUT: sample})
        except Exception as exc:  # an op this ORT build cannot run: keep the exported graph, with a warning
            log.warning("graph rewrite (fused GroupNorm x%d) unusable here, running the exported graph: %s", fused, exc)
            return None
        diff = max(float(np.abs(g.astype(np.float32) - r.astype(np.float32)).max()) for g, r in zip(got, reference))
        scale = max(1.0, max(float(np.abs(r).max()) for r in reference))
        if diff > REWRITE_TOLERANCE * scale:
            log.warning(
                "graph rewrite changed outputs by %.3g (> %.0e): running the exported graph", diff, REWRITE_TOLERANCE
            )
            return None
        log.info("graph rewrite: %d GroupNorm patterns fused (outputs within %.2g of the exported graph)", fused, diff)
        return model

    def run(self, images, floor: float | None = None) -> dict[str, np.ndarray]:
        """Outputs by name for uint8 BGR ``images`` (N, H, W, 3), any N up to the largest bucket.

        ``images`` is a NumPy array, or on the GPU also a CUDA array (e.g. CuPy), copied on the device.
        With ``floor``, a GPU engine whose model ranks its candidates (``ranked_by``) copies to the
        host only the leading candidates that reach past ``floor`` in some image: the rest could
        never pass the score threshold.
        """
        if not self.on_gpu:
            names = [o.name for o in self._cpu_session.get_outputs()]
            return dict(zip(names, self._cpu_session.run(names, {graph_rewrite.IMAGE_INPUT: images})))
        count = len(images)
        runner = self._runners[bucket_of(count, self.buckets)]
        ranked = None if floor is None or self.ranked_by is None else (self.ranked_by, floor)
        return {name: value[:count] for name, value in self._on_thread(runner, images, ranked).items()}

    def replay(self, batch: int) -> None:
        """Run bucket ``batch`` on whatever its device buffers hold, outputs left on the device.

        For benchmarks: the time of the engine alone, without host copies (``run`` loads one first).
        """
        runner = self._runners[batch]
        self._on_thread(runner.session.run_with_iobinding, runner.binding)


class _BoundRunner:
    """One static-shape GPU session with its input and outputs bound to fixed device buffers."""

    def __init__(self, session, shape: tuple[int, ...], per_image: dict) -> None:
        import onnxruntime as ort

        self.session = session
        self.input = ort.OrtValue.ortvalue_from_shape_and_type(shape, np.uint8, "cuda", 0)
        self.outputs = {
            name: ort.OrtValue.ortvalue_from_shape_and_type((shape[0], *rest), out_dtype, "cuda", 0)
            for name, (rest, out_dtype) in per_image.items()
        }
        self.dtypes = {name: np.dtype(out_dtype) for name, (_, out_dtype) in per_image.items()}
        self._copy_stream: Any = None  # a CuPy stream for device-to-device input copies, made on first use
        self.binding = session.io_binding()
        self.binding.bind_ortvalue_input(graph_rewrite.IMAGE_INPUT, self.input)
        for name, value in self.outputs.items():
            self.binding.bind_ortvalue_output(name, value)

    def __call__(self, images: np.ndarray, ranked: tuple[str, float] | None = None) -> dict[str, np.ndarray]:
        self.load(images)
        return self.infer(ranked)

    def load(self, images) -> None:
        """Fill the bound input with ``images`` (host or CUDA array), zeros after them (the padding)."""
        count, bucket = len(images), self.input.shape()[0]
        if hasattr(images, "__cuda_array_interface__"):
            self._load_from_device(images, count, bucket)
            return
        if count < bucket:
            padded = np.zeros((bucket, *images.shape[1:]), dtype=images.dtype)
            padded[:count] = images
            images = padded
        self.input.update_inplace(np.ascontiguousarray(images))

    def _load_from_device(self, images, count: int, bucket: int) -> None:
        import cupy as cp

        images = cp.ascontiguousarray(images)
        if self._copy_stream is None:
            self._copy_stream = cp.cuda.Stream(non_blocking=True)
        runtime_api, stream, target = cp.cuda.runtime, self._copy_stream.ptr, self.input.data_ptr()
        runtime_api.memcpyAsync(target, images.data.ptr, images.nbytes, runtime_api.memcpyDeviceToDevice, stream)
        if count < bucket:
            runtime_api.memsetAsync(target + images.nbytes, 0, images.nbytes // count * (bucket - count), stream)
        self._copy_stream.synchronize()  # ORT runs on its own stream: the input must be complete first

    def infer(self, ranked: tuple[str, float] | None = None) -> dict[str, np.ndarray]:
        """The outputs on the host; with ``ranked`` (the output that sorts every output's axis 1 best
        first, and a score floor) only the columns that some image's candidates over the floor reach."""
        self.session.run_with_iobinding(self.binding)  # ORT synchronises its stream before returning
        if ranked is None:
            return {name: value.numpy() for name, value in self.outputs.items()}
        import cupy as cp

        views = {name: _device_view(value, self.dtypes[name]) for name, value in self.outputs.items()}
        score, floor = ranked
        # YuNet's 256 x 1000 candidates are 16 MB, of which a few dozen per image pass: copying them
        # all held the interpreter for milliseconds per batch, which the decoding thread needs back.
        columns = max(1, int((views[score] > floor).sum(axis=1).max()))
        return {name: cp.asnumpy(view[:, :columns]) for name, view in views.items()}


def _device_view(value, dtype: np.dtype):
    """A CuPy array over an ORT value's device buffer (no copy; valid until the next run)."""
    import cupy as cp

    shape = tuple(value.shape())
    memory = cp.cuda.UnownedMemory(value.data_ptr(), int(np.prod(shape)) * dtype.itemsize, value)
    return cp.ndarray(shape, dtype, cp.cuda.MemoryPointer(memory, 0))
