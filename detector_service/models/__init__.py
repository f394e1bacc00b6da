"""The model registry: names users type, the plugin that serves each ONNX file.

``--model yunet`` names a model facestream fetches itself; ``--model PATH.onnx`` names a file whose
metadata (``facestream.model``, written by our fetch and export tools) picks its plugin.
"""

from pathlib import Path

from facestream import paths
from facestream.detector_service.models import mogface, movenet, yunet
from facestream.detector_service.models.base import (
    META_MODEL,
    META_RANDOM,
    META_VERSION,
    META_WEIGHTS,
    Detections,
    FaceModel,
    InputSpec,
    Thresholds,
    float16,
)
from facestream.errors import ModelError
from facestream.schemas import ModelRef

PLUGINS: dict[str, type] = {
    yunet.YuNet.name: yunet.YuNet,
    mogface.MogFace.name: mogface.MogFace,
    movenet.MoveNet.name: movenet.MoveNet,
}
# Models facestream can download by name: name -> fetch(models_dir) -> path.
FETCHABLE = {"yunet": yunet.fetch, "movenet": movenet.fetch}

__all__ = [
    "FETCHABLE",
    "PLUGINS",
    "Thresholds",
    "Detections",
    "FaceModel",
    "InputSpec",
    "float16_copy",
    "has_random_weights",
    "plugin_for",
    "read_metadata",
    "resolve",
]


def resolve(spec: str) -> Path:
    """A model name or an ONNX path -> the file to load (fetching a named model if needed)."""
    if spec in FETCHABLE:
        return FETCHABLE[spec](paths.models_dir())
    path = Path(spec).expanduser()
    if not path.is_file():
        names = ", ".join(sorted(FETCHABLE))
        raise ModelError(f"--model {spec!r} is neither a known model ({names}) nor an existing .onnx file")
    return path


def read_metadata(path: Path) -> dict[str, str]:
    """An ONNX file's metadata_props, read without its weights or a session."""
    import onnx

    try:
        model = onnx.load(str(path), load_external_data=False)
    except Exception as exc:  # protobuf and onnx raise several types for a file that is not a model
        raise ModelError(f"{path} is not a readable ONNX file: {exc}") from None
    return {prop.key: prop.value for prop in model.metadata_props}


def plugin_for(metadata: dict[str, str], source: str) -> FaceModel:
    """Pick and build the plugin an ONNX file asks for in its metadata."""
    name = metadata.get(META_MODEL)
    if name is None:
        raise ModelError(
            f"{source} carries no '{META_MODEL}' metadata, so facestream cannot tell which plugin reads its outputs; "
            "use a file made by `facestream models fetch` or `facestream export`"
        )
    if name not in PLUGINS:
        raise ModelError(f"{source} is a {name!r} model; this facestream knows {', '.join(sorted(PLUGINS))}")
    ref = ModelRef(
        name=name,
        version=metadata.get(META_VERSION, "unknown"),
        weights_sha256=metadata.get(META_WEIGHTS, "unknown"),
    )
    return PLUGINS[name](ref, metadata)


def has_random_weights(metadata: dict[str, str]) -> bool:
    """Whether the file says it was exported with ``--random-init`` (benchmarks only)."""
    return metadata.get(META_RANDOM) == "true"


def float16_copy(path: Path):
    """The model file as a float16 ONNX ModelProto, made as its plugin needs (``float16_adapted``)."""
    import onnx

    model = onnx.load(str(path))
    plugin = plugin_for(read_metadata(path), str(path))
    if plugin.float16_adapted:
        plugin.adapt_graph(model)
    return float16(model, keep_tail=plugin.float16_adapted)
