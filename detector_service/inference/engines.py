"""Which engine runs a model: ``--provider`` read as a chain, PyTorch first where it is asked for.

``torch,cuda,cpu`` starts MogFace's PyTorch engine and, when it cannot start (PyTorch missing, no
GPU, no engine built for this file, another model), says why and hands the rest of the chain to
ONNX Runtime; the reason stays among the engine's fallbacks, which the metrics show.
"""

import logging
from pathlib import Path

from facestream.detector_service.inference import runtime
from facestream.detector_service.inference.engine import Engine, InferenceEngine
from facestream.detector_service.models.base import FaceModel
from facestream.errors import ModelError

log = logging.getLogger(__name__)


def open_engine(
    path: Path, input_hw: tuple[int, int], batch: int, plugin: FaceModel, provider: str, threads: int = 0
) -> InferenceEngine:
    """An engine for ``plugin``'s file at any batch up to ``batch``, on the first of ``provider``'s
    chain that starts: a ``TorchEngine`` or an ONNX Runtime ``Engine``."""
    written = runtime.parse_chain(provider)
    chain = written.split(",")
    if chain[0] != runtime.TORCH:
        return Engine(path, input_hw, batch, plugin, written, threads)
    from facestream.detector_service.inference.torch_engine import TorchEngine

    try:
        return TorchEngine(path, input_hw, batch, plugin)
    except ModelError as exc:
        if len(chain) == 1:
            raise
        rest = ",".join(chain[1:])
        log.warning("FALLBACK: the torch engine cannot start, ONNX Runtime runs the model (%s): %s", rest, exc)
        engine = Engine(path, input_hw, batch, plugin, rest, threads)
        engine.fallbacks.insert(0, f"torch: {exc}")
        return engine


def onnx_provider(engine: InferenceEngine) -> str:
    """The ONNX Runtime provider for the models that run beside ``engine`` (the embedder): its own,
    or CUDA's beside the torch engine."""
    return "cuda" if engine.provider == runtime.TORCH else engine.provider
