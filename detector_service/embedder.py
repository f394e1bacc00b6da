"""Faces -> identity embeddings: the detector's second model, on the same execution provider as the
first, one inference for all the faces of a batch (in chunks of the largest bucket).

Each face is cut from its full-size frame (on the host, or on the GPU from the decoded batch), aligned
by its 5 landmarks (``align``), and embedded; the embeddings leave L2-normalised, so the similarity of
two faces is the dot product of theirs. A
detector without landmarks (MogFace) gets box crops instead, which cannot undo a tilted head: its
embeddings are less reliable, and the service says so at start.
"""

import logging
from collections.abc import Callable
from pathlib import Path

import numpy as np

from facestream import paths
from facestream.detector_service import align, models
from facestream.detector_service.engine import Engine
from facestream.detector_service.models import sface
from facestream.detector_service.models.base import META_VERSION, META_WEIGHTS, Detections
from facestream.schemas import ModelRef

log = logging.getLogger(__name__)

# (images, image_of, matrices, size) -> crops: where the faces' pixels are cut, host or device
Warp = Callable[[list, np.ndarray, np.ndarray, int], object]
FETCHABLE = {"sface": sface.fetch}  # embedders facestream downloads by name: name -> fetch(models_dir) -> path
FACES_PER_INFERENCE = 64  # the largest bucket: a batch with more faces runs in chunks of this many


def fetch(name: str) -> Path:
    """The embedder model file, downloaded, verified and patched once."""
    return FETCHABLE[name](paths.models_dir())


class Embedder:
    def __init__(self, name: str, provider: str, threads: int = 0, landmarks: bool = True) -> None:
        path = fetch(name)
        metadata = models.read_metadata(path)
        self.ref = ModelRef(name, metadata[META_VERSION], metadata[META_WEIGHTS])
        self.plugin = sface.SFace(self.ref)
        self.engine = Engine(path, (sface.SIZE, sface.SIZE), FACES_PER_INFERENCE, self.plugin, provider, threads)
        self.landmarks = landmarks
        if not landmarks:
            log.warning(
                "the detector gives no landmarks: faces are embedded from box crops, which cannot be aligned; "
                "identities are less reliable than with a landmark model (yunet)"
            )

    def describe(self) -> str:
        how = "aligned by landmarks" if self.landmarks else "box crops"
        return f"{self.ref.name} v{self.ref.version} on {self.engine.provider}, {how}"

    def crops(self, images: list, faces: Detections, image_of: np.ndarray, warp: Warp = align.warp):
        """(F, 112, 112, 3) uint8 BGR: each face of ``faces`` (frame pixels) cut from its image by ``warp``
        (``align.warp`` for host images; on the GPU path, ``align_gpu.GpuWarper`` for device ones)."""
        matrices = align.face_matrices(faces, sface.TEMPLATE, sface.SIZE, use_landmarks=self.landmarks)
        return warp(images, image_of, matrices, sface.SIZE)

    def embed(self, crops) -> np.ndarray:
        """(F, 128) float32, each of unit length, for host or (on a GPU engine) device crops."""
        parts = [
            self.engine.run(crops[start : start + FACES_PER_INFERENCE])["fc1"]
            for start in range(0, len(crops), FACES_PER_INFERENCE)
        ]
        vectors = np.concatenate(parts) if parts else np.zeros((0, sface.DIMENSIONS), np.float32)
        return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)

    def close(self) -> None:
        self.engine.close()
