"""ONNX Runtime session with the provider chain TensorRT -> CUDA -> CPU, and a loud account of it.

Under ``auto`` every provider this onnxruntime build lacks is skipped with a reason, and a provider
that is present but fails to load (ORT drops it and carries on) is reported as a fallback. Asking
for one provider by name never falls back: if it is not what runs, that is an error.
"""

import logging
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from facestream.errors import ModelError

log = logging.getLogger(__name__)

CHAIN = {
    "tensorrt": "TensorrtExecutionProvider",
    "cuda": "CUDAExecutionProvider",
    "cpu": "CPUExecutionProvider",
}
PROVIDER_CHOICES = ("auto", *CHAIN)


@dataclass
class Runtime:
    session: object  # onnxruntime.InferenceSession
    provider: str  # the provider that runs the model's nodes (short name)
    fallbacks: list[str] = field(default_factory=list)  # why better providers are not running

    @property
    def input_name(self) -> str:
        return self.session.get_inputs()[0].name

    @property
    def metadata(self) -> dict[str, str]:
        return dict(self.session.get_modelmeta().custom_metadata_map)

    def run(self, tensor: np.ndarray) -> dict[str, np.ndarray]:
        names = [o.name for o in self.session.get_outputs()]
        return dict(zip(names, self.session.run(names, {self.input_name: tensor})))


def open_session(path: Path, provider: str = "auto", threads: int = 0) -> Runtime:
    """Load ``path`` on the best available provider (``auto``) or exactly the one asked for."""
    import onnxruntime as ort

    if provider not in PROVIDER_CHOICES:
        raise ModelError(f"unknown provider {provider!r}; choose from {', '.join(PROVIDER_CHOICES)}")
    available = ort.get_available_providers()
    wanted = list(CHAIN) if provider == "auto" else [provider]
    fallbacks = [f"{name}: not in this onnxruntime build ({ort.__version__})" for name in wanted
                 if CHAIN[name] not in available]  # fmt: skip
    usable = [name for name in wanted if CHAIN[name] in available]
    if not usable:
        raise ModelError(
            f"provider {provider!r} is not available in this onnxruntime build; it has: {', '.join(available)}"
        )
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    try:
        session = ort.InferenceSession(str(path), options, providers=[CHAIN[n] for n in usable])
    except Exception as exc:  # ORT raises its own untyped errors for bad files
        raise ModelError(f"ONNX Runtime cannot load {path}: {exc}") from None
    active = session.get_providers()
    for name in usable:
        if CHAIN[name] in active:
            break
        fallbacks.append(f"{name}: present but failed to initialise (see ONNX Runtime's log above)")
    runtime = Runtime(session=session, provider=name, fallbacks=fallbacks)
    if provider != "auto" and CHAIN[provider] not in active:
        raise ModelError(f"provider {provider!r} was asked for but failed to initialise; active: {active}")
    report(runtime)
    return runtime


def report(runtime: Runtime) -> None:
    """Say which provider runs and why each better one does not; warn whenever it is not the first."""
    for reason in runtime.fallbacks:
        log.warning("execution provider skipped: %s", reason)
    if runtime.fallbacks:
        log.warning("FALLBACK: inference runs on %s (the chain is tensorrt -> cuda -> cpu)", runtime.provider.upper())
    else:
        log.info("inference runs on %s", runtime.provider)

