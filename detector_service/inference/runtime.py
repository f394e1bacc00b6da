"""ONNX Runtime sessions with the provider chain TensorRT -> CUDA -> CPU, and a loud account of it.

Under ``auto`` (or a chain such as ``cuda,cpu``) every provider this onnxruntime build lacks is
skipped with a reason, and a provider that is present but fails to load (ORT drops it and carries on)
is reported as a fallback. Asking for one provider by name never falls back: if it is not what runs,
that is an error.

Each provider is configured as its users expect: TensorRT with FP16, an engine cache and a timing
cache (keyed by model digest, GPU and versions) and one explicit optimisation profile per batch
bucket; CUDA with NHWC convolutions, exhaustive cuDNN algorithm search and, where the caller can
keep buffers fixed, CUDA graphs.
"""

import logging
import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from facestream import paths
from facestream.assets import sha256_of
from facestream.detector_service.inference import gpu_choice
from facestream.errors import ModelError

log = logging.getLogger(__name__)

CHAIN = {
    "tensorrt": "TensorrtExecutionProvider",
    "cuda": "CUDAExecutionProvider",
    "cpu": "CPUExecutionProvider",
}
TORCH = "torch"  # MogFace's PyTorch engine (inference/torch_engine.py), ahead of ONNX Runtime's providers
PROVIDER_CHOICES = ("auto", *CHAIN)


def parse_chain(spec: str) -> str:
    """``--provider``: ``auto`` or providers in the order to try, comma-separated (``torch,cuda,cpu``);
    the chain as written back, or ValueError (the config names the option)."""
    names = [name.strip() for name in spec.split(",") if name.strip()]
    if names == ["auto"]:
        return "auto"
    known = (TORCH, *CHAIN)
    unknown = [name for name in names if name not in known]
    if not names or unknown or len(set(names)) != len(names):
        raise ValueError(
            f"{spec!r}: give auto, or some of {', '.join(known)} in the order to try, "
            "each once, comma-separated (e.g. torch,cuda,cpu)"
        )
    if TORCH in names[1:]:
        raise ValueError(f"{spec!r}: torch falls back to ONNX Runtime, so it can only come first")
    return ",".join(names)


@dataclass(frozen=True)
class SessionPlan:
    """What to build one session with: the input shape it will see and how to tune each provider."""

    input_name: str
    input_shape: tuple[int, ...] | None  # static image shape (N, H, W, 3) per bucket; None: dynamic (CPU)
    profiles: tuple[tuple[int, ...], ...] = ()  # TensorRT: one static profile per bucket shape
    cache_dir: Path | None = None  # TensorRT engine + timing caches
    trt_fp16: bool = True
    cuda_graph: bool = False
    prefer_nhwc: bool = True
    fuse_conv_bias: bool = True  # cuDNN adds a convolution's bias inside it, not in a pass of its own
    threads: int = 0
    cuda_options: tuple[tuple[str, str], ...] = ()  # CUDA provider options over the defaults (benchmark sweeps)


@dataclass
class Selection:
    """The providers to ask for, in order, and why better ones are missing."""

    requested: str
    names: list[str]
    fallbacks: list[str] = field(default_factory=list)


def select(provider: str) -> Selection:
    """Which providers of the chain (``auto``, one name, or names comma-separated) this onnxruntime
    build has; ModelError if none of those asked for."""
    import onnxruntime as ort

    available = ort.get_available_providers()
    wanted = list(CHAIN) if provider == "auto" else provider.split(",")
    selection = Selection(provider, [n for n in wanted if CHAIN[n] in available])
    selection.fallbacks = [
        f"{n}: not in this onnxruntime build ({ort.__version__})" for n in wanted if CHAIN[n] not in available
    ]
    if not selection.names:
        raise ModelError(
            f"provider {provider!r} is not available in this onnxruntime build; it has: {', '.join(available)}"
        )
    return selection


def provider_options(name: str, plan: SessionPlan) -> dict[str, str]:
    """ORT provider options for ``name`` under ``plan`` (strings, as ORT documents them)."""
    if name == "tensorrt":
        options = {"trt_fp16_enable": _flag(plan.trt_fp16), "trt_builder_optimization_level": "3"}
        if plan.cache_dir is not None:
            options.update(
                {
                    "trt_engine_cache_enable": "1",
                    "trt_engine_cache_path": str(plan.cache_dir),
                    "trt_timing_cache_enable": "1",
                    "trt_timing_cache_path": str(plan.cache_dir),
                }
            )
        if plan.profiles:
            for key in ("min", "opt", "max"):  # exact profiles: every bucket gets kernels tuned for it
                options[f"trt_profile_{key}_shapes"] = ",".join(
                    f"{plan.input_name}:{'x'.join(map(str, shape))}" for shape in plan.profiles
                )
        return options
    if name == "cuda":
        return {
            "prefer_nhwc": _flag(plan.prefer_nhwc),
            "cudnn_conv_algo_search": "EXHAUSTIVE",
            "cudnn_conv_use_max_workspace": "1",
            "do_copy_in_default_stream": "1",
            "enable_cuda_graph": _flag(plan.cuda_graph),
            "fuse_conv_bias": _flag(plan.fuse_conv_bias),
            **dict(plan.cuda_options),
        }
    return {}


def open_session(
    path: Path, selection: Selection, plan: SessionPlan, optimized_path: Path | None = None, graph: bytes | None = None
):
    """One InferenceSession of ``path`` (or of ``graph``, a rewritten copy of it); returns
    (session, active provider short name, fallbacks incl. load failures)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = plan.threads
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3  # ORT's own warnings are summarised by us below
    if plan.input_shape is not None:
        # A static shape lets ORT fold every shape computation into constants: no CPU-side
        # shape ops, no Memcpy nodes between devices, and a graph CUDA can capture.
        for name, size in zip(("batch", "height", "width"), plan.input_shape):
            options.add_free_dimension_override_by_name(name, size)
    if optimized_path is not None:
        options.optimized_model_filepath = str(optimized_path)
    providers = [(CHAIN[n], provider_options(n, plan)) for n in selection.names]
    try:
        session = ort.InferenceSession(graph if graph is not None else str(path), options, providers=providers)
    except Exception as exc:  # ORT raises its own untyped errors for bad files and bad options
        raise ModelError(f"ONNX Runtime cannot load {path}: {exc}") from None
    active = session.get_providers()
    fallbacks = list(selection.fallbacks)
    for name in selection.names:
        if CHAIN[name] in active:
            break
        fallbacks.append(f"{name}: present but failed to initialise (its libraries are missing or unusable)")
    if selection.requested in CHAIN and CHAIN[selection.requested] not in active:  # one, by name
        raise ModelError(f"provider {selection.requested!r} was asked for but failed to initialise; active: {active}")
    return session, name, fallbacks


def report(provider: str, fallbacks: list[str]) -> None:
    """Say which provider runs and why each better one does not; warn whenever it is not the first."""
    for reason in fallbacks:
        log.warning("execution provider skipped: %s", reason)
    if fallbacks:
        log.warning("FALLBACK: inference runs on %s (the chain is tensorrt -> cuda -> cpu)", provider.upper())
    else:
        log.info("inference runs on %s", provider)


def engine_cache_dir(model_path: Path) -> Path:
    """TensorRT caches are only valid for one model, GPU, ORT and TRT: key the folder by all four."""
    import onnxruntime as ort

    return built_engines_dir(model_path, f"ort-{ort.__version__}-trt-{_trt_version()}")


def built_engines_dir(model_path: Path, runtime_key: str) -> Path:
    """Where engines built for one model file, on this GPU, by one runtime (``runtime_key``) are kept."""
    digest = sha256_of(model_path)[:16]  # streamed: model files run to hundreds of MB
    return paths.home() / "engines" / f"{model_path.stem}-{digest}" / _gpu_name() / runtime_key


def _gpu_name() -> str:
    try:
        out = subprocess.run(gpu_name_query(os.environ), capture_output=True, text=True, timeout=10).stdout
        return out.splitlines()[0].strip().replace(" ", "_") if out.strip() else "no-gpu"
    except (OSError, subprocess.SubprocessError):
        return "no-gpu"


def gpu_name_query(env: Mapping[str, str]) -> list[str]:
    """nvidia-smi's question for the name of the GPU this process runs on: the first of
    ``CUDA_VISIBLE_DEVICES`` (an index or a UUID, as ``--device`` sets it), else the first GPU. Without
    it, a cache made on a mixed host could be keyed to another GPU's model."""
    query = ["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"]
    gpus = gpu_choice.visible(env)
    return [*query, "-i", gpus[0]] if gpus else query


def _trt_version() -> str:
    try:
        import tensorrt  # optional: only present with TensorRT installed

        return tensorrt.__version__
    except ImportError:
        return "none"


def _flag(value: bool) -> str:
    return "1" if value else "0"
