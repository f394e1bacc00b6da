"""MogFace run by PyTorch: an AOTInductor package built ahead of time for every batch up to the largest.

ONNX Runtime's CUDA provider neither times its cuDNN kernels nor fuses a convolution with the ReLU
and the residual Add after it, so on MogFace it trails ``torch.compile``. This engine compiles the
project's own network (``models/mogface_torch``) with Inductor ahead of time into one package with a
dynamic batch axis (``facestream models build-engine --provider torch``: minutes, once per model,
batch, size, GPU and PyTorch version), then loads it at start in seconds; the buckets only pad
batches to fixed sizes. The package takes the same uint8 NHWC BGR batch and returns the same top-k
candidates (``scores``, ``deltas``, ``anchor``) as the ONNX engine's adapted graph, so
``MogFace.to_detections`` reads either. A decoded batch on the GPU comes in through DLPack, without
a host copy.

It serves the same calls as ``engine.Engine`` (``run``, ``replay``, ``close``, one thread of its
own); ``engines.open_engine`` picks it when ``--provider`` starts with ``torch``.
"""

import logging
import time
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
# Inductor's settings per build kind. ``freezing`` folds every batch norm into its convolution's
# weights; ``autotune`` also runs the 1x1 convolutions (two in three of MogFace's) as matrix products
# and times Inductor's Triton kernels for them against cuBLAS, so that the ReLU and the residual Add
# run inside the product (minutes). The 3x3 convolutions stay with cuDNN: Inductor's Triton
# convolution templates took more than six minutes to tune on the H200, many refused for shared
# memory. ``quick`` keeps Inductor's defaults (for tests).
BUILDS: dict[str, dict[str, Any]] = {
    "autotune": {"freezing": True, "max_autotune_gemm": True, "conv_1x1_as_mm": True},
    "quick": {"freezing": True},
}
WARM_RUNS = 3  # runs at start, so that the first batch does not pay for cuBLAS's and Triton's set-up


def _torch():
    try:
        import torch
    except ImportError:
        raise ModelError("PyTorch is not installed: pip install 'facestream[gpu-torch]'") from None
    return torch


def packages_dir(model_path: Path) -> Path:
    """Where this model file's packages are kept: keyed by the file, the GPU and the PyTorch version."""
    return runtime.built_engines_dir(model_path, f"torch-{_torch().__version__}")


def package_path(folder: Path, batch: int, input_hw: tuple[int, int]) -> Path:
    """The package that runs any batch up to ``batch`` at ``input_hw``."""
    return folder / f"batch-1-{batch}-{input_hw[1]}x{input_hw[0]}.pt2"


def served_module(net, transform: InputTransform, top_k: int):
    """``net`` (float32 MogFace, weights loaded, heads merged) wrapped to take what the engines take:
    uint8 NHWC BGR in, the best ``top_k`` candidates out, in float16 channels-last on the GPU."""
    torch: Any = _torch()

    class Served(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
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

    return Served().cuda()


def build(
    served,
    target: Path,
    batch: int,
    input_hw: tuple[int, int],
    kind: str = "autotune",
    progress: Callable[[str], None] = log.info,
) -> Path:
    """Compile ``served`` into ``target`` for any batch up to ``batch``, tuned at ``batch`` (the file
    appears only once complete): one package, one copy of the weights, for every bucket."""
    torch = _torch()
    target.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    progress(f"torch engine: compiling batches 1-{batch} at {input_hw[1]}x{input_hw[0]} ({kind}) ...")
    example = torch.zeros((batch, *input_hw, 3), dtype=torch.uint8, device="cuda")
    sizes = ({0: torch.export.Dim("batch", min=1, max=batch)},) if batch > 1 else None
    partial = target.with_name(target.name + ".partial.pt2")
    with torch.no_grad():
        program = torch.export.export(served, (example,), dynamic_shapes=sizes)
        torch._inductor.aoti_compile_and_package(program, package_path=str(partial), inductor_configs=BUILDS[kind])
    partial.replace(target)
    progress(f"torch engine: built in {time.monotonic() - started:.0f} s: {target}")
    return target


def network_for(model_path: Path, metadata: dict[str, str], checkpoint: Path | None, seed: int | None):
    """The float32 MogFace of the file ``model_path``: from the checkpoint it was exported from, or from
    the seed of its random weights; refused unless the weights' digest is the one the file records."""
    from facestream.detector_service.models.mogface_torch import merge_heads, net, weights

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
    merge_heads.merge_heads(model)
    return model.eval()


def build_for_file(
    model_path: Path,
    plugin: FaceModel,
    input_hw: tuple[int, int],
    batch: int,
    checkpoint: Path | None,
    seed: int | None,
    kind: str = "autotune",
    progress: Callable[[str], None] = log.info,
    rebuild: bool = False,
) -> Path:
    """The package ``TorchEngine`` loads for ``model_path`` at any batch up to ``batch``, built unless
    it exists (or with ``rebuild``)."""
    from facestream.detector_service.models import read_metadata

    if plugin.name != mogface.MogFace.name:
        raise ModelError(f"the torch engine runs MogFace only; {model_path.name} is a {plugin.name} model")
    target = package_path(packages_dir(model_path), batch, input_hw)
    if target.exists() and not rebuild:
        progress(f"torch engine: built already: {target}")
        return target
    net = network_for(model_path, read_metadata(model_path), checkpoint, seed)
    return build(served_module(net, plugin.input_transform, mogface.TOP_K), target, batch, input_hw, kind, progress)


class TorchEngine(OwnThread):
    """MogFace's packages for every bucket up to ``batch``, loaded on the engine's own thread."""

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
        if plugin.name != mogface.MogFace.name:
            raise ModelError(f"the torch engine runs MogFace only; {path.name} is a {plugin.name} model")
        if not torch.cuda.is_available():
            raise ModelError("PyTorch sees no CUDA GPU")
        self.path, self.input_hw, self.batch, self.plugin = path, input_hw, batch, plugin
        self.buckets = buckets_for(batch, buckets or DEFAULT_BUCKETS)
        self.fallbacks: list[str] = []
        self.ranked_by = plugin.ranked_by
        package = package_path(packages_dir(path), batch, input_hw)
        if not package.exists():
            raise ModelError(
                f"no torch engine is built for {path.name} at batch {batch} and {input_hw[1]}x{input_hw[0]} on this "
                f"GPU and PyTorch ({package}); build it once with "
                f"`facestream models build-engine --model {path} --provider torch --batch {batch} --checkpoint FILE`"
            )
        super().__init__()
        started = time.perf_counter()
        # the 3x3 convolutions run through cuDNN: time its algorithms once per bucket (during the warm
        # runs) instead of taking its heuristic's choice, as a user tuning PyTorch would
        torch.backends.cudnn.benchmark = True
        loaded = self._on_thread(_load, package)
        self._runners = {b: self._on_thread(_Bucket, loaded, (b, *input_hw, 3)) for b in self.buckets}
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
        runner = self._runners[bucket_of(len(images), self.buckets)]
        return self._on_thread(runner, images, floor)

    def replay(self, batch: int) -> None:
        """Run bucket ``batch`` on whatever its input holds, outputs left on the device (benchmarks)."""
        self._on_thread(self._runners[batch].replay)


def _load(path: Path):
    try:
        return _torch()._inductor.aoti_load_package(str(path))
    except Exception as exc:  # a damaged file, or one built by another PyTorch: its errors are untyped
        raise ModelError(f"cannot load the torch engine {path}: {exc}") from None


class _Bucket:
    """The package at one batch size, with its input at a fixed device address. Not captured as a CUDA
    graph: AOTInductor's runner (PyTorch 2.11) makes a call that a capture forbids, and a failed capture
    leaves the process's graph state broken; it launches its kernels from C++, with no Python per kernel."""

    def __init__(self, package, shape: tuple[int, ...]) -> None:
        torch = _torch()
        self.torch, self.package = torch, package
        self.input = torch.zeros(shape, dtype=torch.uint8, device="cuda")
        for _ in range(WARM_RUNS):
            self.replay()

    def replay(self) -> None:
        with self.torch.inference_mode():
            self.outputs = self.package(self.input)
        self.torch.cuda.current_stream().synchronize()

    def __call__(self, images, floor: float | None = None) -> dict[str, np.ndarray]:
        torch, count = self.torch, len(images)
        if hasattr(images, "__dlpack__") and not isinstance(images, np.ndarray):
            source = torch.from_dlpack(images)  # on the device: the producer's stream is waited for
        else:
            source = torch.from_numpy(np.ascontiguousarray(images))
        self.input[:count].copy_(source)
        if count < len(self.input):
            self.input[count:].zero_()
        self.replay()
        scores, deltas, anchor = self.outputs
        columns = scores.shape[1] if floor is None else max(1, int((scores[:count] > floor).sum(dim=1).max()))
        return {name: value[:count, :columns].cpu().numpy() for name, value in zip(OUTPUTS, (scores, deltas, anchor))}
