"""The small interface every face-detection model implements, and what it returns.

A model plugin knows three things about its network and nothing about Kafka: how to turn a batch
of letterboxed BGR images into the network's input (``prepare``), how to turn the network's
outputs into boxes in network-input pixels (``decode``), and who it is (``ref``, from the ONNX
file's metadata). Letterboxing, running ONNX Runtime and mapping boxes back to the original
frame are shared and live outside the plugins.
"""

from dataclasses import dataclass, field
from typing import ClassVar, Protocol

import numpy as np

from schemas import ModelRef

# Keys facestream writes into an ONNX file's metadata_props so that a file names its own plugin.
META_MODEL = "facestream.model"
META_VERSION = "facestream.version"
META_WEIGHTS = "facestream.weights_sha256"


@dataclass(frozen=True)
class Detections:
    """Faces of one image, in network-input pixels."""

    boxes: np.ndarray  # (N, 4) float32: x0, y0, x1, y1
    scores: np.ndarray  # (N,) float32
    landmarks: np.ndarray | None = None  # (N, K, 2) float32, or None if the model has none

    def __len__(self) -> int:
        return len(self.scores)


@dataclass(frozen=True)
class DecodeOptions:
    """Thresholds every detector takes; a plugin supplies its own defaults."""

    score_threshold: float
    nms_iou: float
    top_k: int = 5000  # candidates kept (by score) before NMS
    max_faces: int = 750  # kept after NMS


@dataclass(frozen=True)
class InputSpec:
    """The network input: a fixed size per service run, so frames of any size batch together."""

    height: int
    width: int
    multiple_of: int = field(default=1, compare=False)


class FaceModel(Protocol):
    name: ClassVar[str]
    default_options: ClassVar[DecodeOptions]
    default_input: ClassVar[InputSpec]

    ref: ModelRef

    def prepare(self, images: np.ndarray) -> np.ndarray:
        """uint8 BGR (N, H, W, 3) -> the network's input tensor."""
        ...

    def decode(
        self, outputs: dict[str, np.ndarray], input_hw: tuple[int, int], options: DecodeOptions
    ) -> list[Detections]:
        """Network outputs for a batch (by output name) at input size (H, W) -> one Detections per image."""
        ...
