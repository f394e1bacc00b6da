"""MogFace run by PyTorch: the project's own network compiled by Inductor, built ahead of time.

ONNX Runtime's CUDA provider neither times its cuDNN kernels nor fuses a convolution with the ReLU and
the residual Add after it, so on MogFace it trails ``torch.compile``. This engine runs the project's
own network (``models/mogface_torch``) through ``torch.compile``: the backbone's batch norms, ReLUs and
residual Adds run inside cuDNN's convolutions (``fused_convs``), one compiled graph serves every batch
up to the largest, and each bucket replays as a CUDA graph. Compiling (and, in the ``autotune`` build,
timing Inductor's kernels) takes minutes, so ``facestream models build-engine --provider torch`` does
it once per model, batch, size, GPU and PyTorch version and keeps what the engine needs beside each
other: the network's FP16 weights (``weights.pt``, checked against the model file's digest when built)
and Inductor's caches (``torch.compiler.save_cache_artifacts``), which the engine loads at start so
that compiling finds every kernel built and tuned. The engine takes the same uint8 NHWC BGR batch and
returns the same top-k candidates (``scores``, ``deltas``, ``anchor``) as the ONNX engine's adapted
graph, so ``MogFace.to_detections`` reads either. A decoded batch on the GPU comes in through DLPack,
without a host copy.

(AOTInductor packages were tried first: PyTorch 2.11's build links the C++ library statically into
the package, and loading one crashed inside ``std::regex`` in most processes.)

It serves the same calls as ``engine.Engine`` (``run``, ``replay``, ``close``, one thread of its
own); ``engines.open_engine`` picks it when ``--provider`` starts with ``torch``.
"""

import json
import logging
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from facestream.detector_service.inference import runtime
from facestream.detector_service.inference.engine import DEFAULT_BUCKETS, OwnThread, bucket_of, buckets_for
from facestream.detector_service.models import mogface
from facestream.detector_service.models.base import META_VERSION, META_WEIGHTS, FaceModel, InputTransform
from facestream.errors import ModelError

log = logging.getLogger(__name__)

OUTPUTS = ("scores", "deltas", "anchor")  # what the ONNX engine's adapted MogFace graph returns
# Inductor's settings per build kind. ``freezing`` treats the weights as constants (folded where
# Inductor can); ``triton.cudagraphs`` replays each bucket as one CUDA graph (what batch 1 needs: MogFace
# launches hundreds of kernels); cuDNN times its own algorithms for each bucket at start. ``autotune``
# also runs the 1x1 convolutions (two in three of MogFace's) as matrix products and times Inductor's
# Triton kernels against cuBLAS and cuDNN, so that a ReLU or residual Add could run inside them. On
# the H200 with PyTorch 2.11 that tuning took in the 3x3 convolutions too, was still going after
# minutes, and the Triton templates it had timed were slower than cuDNN's kernels: ``quick``, which
# tunes nothing, is the default.
QUICK = {"freezing": True, "triton.cudagraphs": True}
BUILDS: dict[str, dict[str, Any]] = {
    "autotune": {**QUICK, "max_autotune_gemm": True, "conv_1x1_as_mm": True},
    "quick": QUICK,
}
WEIGHTS = "weights.pt"
RECOMPILE_LIMIT = 64
WARM_RUNS = 3  # runs per bucket at start: Inductor's cudagraph trees record a bucket on its second


def _torch():
    try:
        import torch
    except ImportError:
        raise ModelError("PyTorch is not installed: pip install 'facestream[gpu-torch]'") from None
    return torch


def built_dir(model_path: Path) -> Path:
    """Where this model file's builds are kept: keyed by the file, the GPU and the PyTorch version."""
    return runtime.built_engines_dir(model_path, f"torch-{_torch().__version__}")


def manifest_path(folder: Path, batch: int, input_hw: tuple[int, int]) -> Path:
    """The record of the build that runs any batch up to ``batch`` at ``input_hw``: its kind, Inductor
    settings and caches file. The name carries the network's layout, so that a build made before the
    modules changed is not found (and is built again) rather than failing to load."""
    from facestream.detector_service.models.mogface_torch.fused_convs import LAYOUT

    return folder / f"batch-1-{batch}-{input_hw[1]}x{input_hw[0]}-{LAYOUT}.json"


def served_module(net, transform: InputTransform, top_k: int, fuse: bool = True):
    """``net`` (MogFace, in eval mode) wrapped to take what the engines take: uint8 NHWC BGR in, the
    best ``top_k`` candidates out, in float16 channels-last on the GPU. With ``fuse`` (what the engine
    runs), its batch norms, ReLUs and residual Adds run inside cuDNN's convolutions (``fused_convs``)."""
    torch: Any = _torch()
    from facestream.detector_service.models.mogface_torch.fused_convs import fuse_convolutions
    from facestream.detector_service.models.mogface_torch.group_norm import use_channels_last_group_norms

    class Served(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            use_channels_last_group_norms(net)
            if fuse:
                fuse_convolutions(net)  # batch norms folded in float32, before the cast to float16
            self.net = net.half().to(memory_format=torch.channels_last).eval()
            self.register_buffer("mean", torch.tensor(transform.mean_bgr).view(1, 3, 1, 1))
            self.register_buffer("scale", torch.tensor(transform.scale_bgr).view(1, 3, 1, 1))

        def forward(self, images):
            x = (images.permute(0, 3, 1, 2).float() - self.mean) * self.scale  # NCHW view of NHWC memory
            if transform.to_rgb:
                x = x.flip(1)
            scores, deltas = self.net(x.half().contiguous(memory_format=torch.channels_last))
            scores = scores.reshape(scores.shape[0], -1).float()
            top, anchor = scores.topk(min(top_k, scores.shape[1]), dim=1)
            kept = deltas.float().gather(1, anchor.unsqueeze(2).expand(-1, -1, deltas.shape[2]))
            return top, kept, anchor

    return Served().cuda().eval()


def compiled_module(served, options: dict[str, Any], batch: int, input_hw: tuple[int, int], buckets: tuple[int, ...]):
    """``served`` compiled with ``options`` and run on every bucket (``WARM_RUNS`` times each, inputs at
    fixed addresses): one graph with a dynamic batch axis, tuned at ``batch``, and one for batch 1
    (Dynamo specialises a size of 1). Returns (the compiled module, its input per bucket)."""
    torch = _torch()
    # each engine (and build) compiles a network of its own, two graphs each: room for many in one
    # process (tests, benchmarks), and an error rather than a silent fall back to eager beyond it
    torch._dynamo.config.recompile_limit = max(torch._dynamo.config.recompile_limit, RECOMPILE_LIMIT)
    torch._dynamo.config.fail_on_recompile_limit_hit = True
    _cudagraph_trees_here()
    compiled = torch.compile(served, options=options)
    inputs = {b: torch.zeros((b, *input_hw, 3), dtype=torch.uint8, device="cuda") for b in buckets}
    if batch > 1:  # first, so that the dynamic graph is the one compiled and tuned at ``batch``
        torch._dynamo.mark_dynamic(inputs[batch], 0, min=2, max=batch)
    with torch.inference_mode():
        for b in sorted(inputs, reverse=True):
            for _ in range(WARM_RUNS):
                torch.compiler.cudagraph_mark_step_begin()
                compiled(inputs[b])
    torch.cuda.synchronize()
    return compiled, inputs


def _cudagraph_trees_here() -> None:
    """Give this thread the state Inductor's cudagraph trees keep per thread. PyTorch 2.11 sets it up
    only on the thread that imported it, and the engine runs on a thread of its own."""
    from torch._inductor import cudagraph_trees

    if not hasattr(cudagraph_trees.local, "tree_manager_containers"):
        cudagraph_trees.local.tree_manager_containers = {}
        cudagraph_trees.local.tree_manager_locks = defaultdict(threading.Lock)


def build(
    served,
    folder: Path,
    batch: int,
    input_hw: tuple[int, int],
    kind: str = "quick",
    progress: Callable[[str], None] = log.info,
) -> Path:
    """Compile ``served`` for any batch up to ``batch`` (tuned at ``batch``) and keep its weights and
    Inductor's caches in ``folder``; returns the manifest, written last (a build is whole or absent)."""
    torch = _torch()
    folder.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    progress(f"torch engine: compiling batches 1-{batch} at {input_hw[1]}x{input_hw[0]} ({kind}) ...")
    _write(folder / WEIGHTS, lambda f: torch.save(served.state_dict(), f))
    compiled_module(served, BUILDS[kind], batch, input_hw, buckets_for(batch))
    saved = torch.compiler.save_cache_artifacts()
    if saved is None:
        raise ModelError("torch engine: Inductor saved no caches (are its caches turned off?)")
    target = manifest_path(folder, batch, input_hw)
    caches = target.with_suffix(".inductor")
    _write(caches, lambda f: f.write(saved[0]))
    manifest = {"build": kind, "inductor": BUILDS[kind], "caches": caches.name, "built_s": time.monotonic() - started}
    _write(target, lambda f: f.write(json.dumps(manifest, indent=1).encode()))
    progress(f"torch engine: built in {time.monotonic() - started:.0f} s: {folder}")
    return target


def _write(path: Path, fill: Callable[[Any], Any]) -> None:
    """Write ``path`` through ``fill(file)`` so that it appears only once complete."""
    partial = path.with_name(path.name + ".partial")
    with partial.open("wb") as f:
        fill(f)
    partial.replace(path)


def network_for(model_path: Path, metadata: dict[str, str], checkpoint: Path | None, seed: int | None):
    """The float32 MogFace of the file ``model_path``: from the checkpoint it was exported from, or from
    the seed of its random weights; refused unless the weights' digest is the one the file records.
    Its two heads stay apart, whether or not the file merged them: cuDNN runs the merged heads'
    2-group convolutions slower than two plain ones (about 13% more time per image on the H200 at
    batch 32), while ONNX Runtime gains from merging them."""
    from facestream.detector_service.models.mogface_torch import net, weights

    model = net.MogFace(metadata.get(META_VERSION, "mogface"))
    if checkpoint is not None:
        digest = weights.load_official(model, checkpoint)
        source = str(checkpoint)
    elif seed is not None:
        digest = weights.randomise(model, seed)
        source = f"random weights of seed {seed}"
    else:
        raise ModelError("the torch engine is built from the model's checkpoint: give --checkpoint FILE")
    if digest != metadata.get(META_WEIGHTS):
        raise ModelError(
            f"{source} is not what {model_path.name} was exported from "
            f"(weights sha256 {digest[:16]}..., the file records {metadata.get(META_WEIGHTS, 'none')[:16]}...)"
        )
    return model.eval()


def build_for_file(
    model_path: Path,
    plugin: FaceModel,
    input_hw: tuple[int, int],
    batch: int,
    checkpoint: Path | None,
    seed: int | None,
    kind: str = "quick",
    progress: Callable[[str], None] = log.info,
    rebuild: bool = False,
) -> Path:
    """The build ``TorchEngine`` loads for ``model_path`` at any batch up to ``batch`` (its manifest),
    made unless it exists (or with ``rebuild``)."""
    from facestream.detector_service.models import read_metadata

    _check_plugin(model_path, plugin)
    folder = built_dir(model_path)
    target = manifest_path(folder, batch, input_hw)
    if target.exists() and not rebuild:
        progress(f"torch engine: built already: {target}")
        return target
    net = network_for(model_path, read_metadata(model_path), checkpoint, seed)
    return build(served_module(net, plugin.input_transform, mogface.TOP_K), folder, batch, input_hw, kind, progress)


def _check_plugin(path: Path, plugin: FaceModel) -> None:
    if plugin.name != mogface.MogFace.name:
        raise ModelError(f"the torch engine runs MogFace only; {path.name} is a {plugin.name} model")


class TorchEngine(OwnThread):
    """MogFace compiled for every bucket up to ``batch`` from its build, run on the engine's own thread."""

    provider = runtime.TORCH
    on_gpu = True
    onnx_model = None  # no ONNX graph runs here

    def __init__(
        self,
        path: Path,
        input_hw: tuple[int, int],
        batch: int,
        plugin: FaceModel,
        buckets: tuple[int, ...] | None = None,
    ) -> None:
        torch = _torch()
        _check_plugin(path, plugin)
        if not torch.cuda.is_available():
            raise ModelError("PyTorch sees no CUDA GPU")
        self.path, self.input_hw, self.batch, self.plugin = path, input_hw, batch, plugin
        self.buckets = buckets_for(batch, buckets or DEFAULT_BUCKETS)
        self.fallbacks: list[str] = []
        self.ranked_by = plugin.ranked_by
        manifest = manifest_path(built_dir(path), batch, input_hw)
        if not manifest.exists():
            raise ModelError(
                f"no torch engine is built for {path.name} at batch {batch} and {input_hw[1]}x{input_hw[0]} on this "
                f"GPU and PyTorch ({manifest}); build it once with "
                f"`facestream models build-engine --model {path} --provider torch --batch {batch} --checkpoint FILE`"
            )
        super().__init__()
        started = time.perf_counter()
        # the 3x3 convolutions run through cuDNN: time its algorithms once per bucket (during the warm
        # runs) instead of taking its heuristic's choice, as a user tuning PyTorch would
        torch.backends.cudnn.benchmark = True
        skipped = _cudagraph_skips()
        self._compiled, self._inputs = self._on_thread(_load, path, plugin, manifest, batch, input_hw, self.buckets)
        if _cudagraph_skips() > skipped:  # each run then launches MogFace's hundreds of kernels one by one
            reason = "torch: Inductor runs some buckets without CUDA graphs (TORCH_LOGS=perf_hints says why)"
            self.fallbacks.append(reason)
            log.warning("FALLBACK: %s", reason)
        log.info(
            "engine: torch %s, buckets %s ready in %.1f s",
            torch.__version__,
            list(self.buckets),
            time.perf_counter() - started,
        )

    def run(self, images, floor: float | None = None) -> dict[str, np.ndarray]:
        """Outputs by name for uint8 BGR ``images`` (N, H, W, 3): a NumPy array or a CUDA array (taken
        through DLPack). With ``floor``, only the leading candidates that pass it in some image come to
        the host (the others could never pass the score threshold)."""
        return self._on_thread(self._run, images, floor)

    def replay(self, batch: int) -> None:
        """Run bucket ``batch`` on whatever its input holds, outputs left on the device (benchmarks)."""
        self._on_thread(self._replay, batch)

    def _replay(self, batch: int):
        torch = _torch()
        with torch.inference_mode():
            torch.compiler.cudagraph_mark_step_begin()  # the last run's outputs are read: reuse their memory
            outputs = self._compiled(self._inputs[batch])
        torch.cuda.current_stream().synchronize()
        return outputs

    def _run(self, images, floor: float | None) -> dict[str, np.ndarray]:
        torch, count = _torch(), len(images)
        bucket = self._inputs[bucket_of(count, self.buckets)]
        if hasattr(images, "__dlpack__") and not isinstance(images, np.ndarray):
            source = torch.from_dlpack(images)  # on the device: the producer's stream is waited for
        else:
            source = torch.from_numpy(np.ascontiguousarray(images))
        bucket[:count].copy_(source)
        if count < len(bucket):
            bucket[count:].zero_()
        scores, deltas, anchor = self._replay(len(bucket))
        columns = scores.shape[1] if floor is None else max(1, int((scores[:count] > floor).sum(dim=1).max()))
        return {name: value[:count, :columns].cpu().numpy() for name, value in zip(OUTPUTS, (scores, deltas, anchor))}


def _cudagraph_skips() -> int:
    """How many graphs Inductor has compiled without a CUDA graph in this process (its own counter)."""
    from torch._dynamo.utils import counters

    return int(counters["inductor"]["cudagraph_skips"])


def _load(
    path: Path, plugin: FaceModel, manifest_file: Path, batch: int, input_hw: tuple[int, int], buckets: tuple[int, ...]
):
    """The compiled network and its bucket inputs, from the build beside ``manifest_file``: Inductor's
    caches loaded first, so that compiling finds every kernel built."""
    from facestream.detector_service.models import read_metadata
    from facestream.detector_service.models.mogface_torch import net

    torch = _torch()
    folder = manifest_file.parent
    try:
        manifest = json.loads(manifest_file.read_text())
        torch.compiler.load_cache_artifacts((folder / manifest["caches"]).read_bytes())
        state = torch.load(folder / WEIGHTS, map_location="cuda", weights_only=True)
    except (OSError, ValueError, KeyError, RuntimeError) as exc:  # a damaged build, or another PyTorch's
        raise ModelError(f"cannot load the torch engine in {folder}: {exc}") from None
    with torch.device("meta"):  # shapes only: the weights come from the build
        model = net.MogFace(read_metadata(path).get(META_VERSION, "mogface"))
    served = served_module(model.to_empty(device="cuda").eval(), plugin.input_transform, mogface.TOP_K)
    served.load_state_dict(state)
    return compiled_module(served, manifest["inductor"], batch, input_hw, buckets)
