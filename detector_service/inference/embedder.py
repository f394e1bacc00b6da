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
from typing import Any, TypeAlias

import numpy as np

from facestream import paths
from facestream.detector_service import models
from facestream.detector_service.decoding import align
from facestream.detector_service.decoding.placements import DeviceImages, HostImages
from facestream.detector_service.inference import runtime
from facestream.detector_service.inference.engine import Engine
from facestream.detector_service.models import sface
from facestream.detector_service.models.base import META_VERSION, META_WEIGHTS, Detections
from facestream.schemas import ModelRef

log = logging.getLogger(__name__)

Images: TypeAlias = HostImages | DeviceImages | list  # full-size frames, as the decoder kept them (or a list of arrays)
# (images, image_of, matrices, size) -> crops: where the faces' pixels are cut, each warp from the
# images it can read (host or device)
Warp = Callable[[Any, np.ndarray, np.ndarray, int], object]
FETCHABLE = {"sface": sface.fetch}  # embedders by name: name -> fetch(models_dir, fp16=False) -> path
FACES_PER_INFERENCE = 256  # the largest bucket: a batch with more faces runs in chunks of this many
# Static batch sizes on a GPU (each its own session and CUDA graph): a detector batch brings anything
# from a few faces to hundreds, and padding 65 faces up to 256 would waste most of an inference.
BUCKETS = (1, 4, 16, 32, 64, 128, FACES_PER_INFERENCE)
# CUDA provider options over the engine's defaults for the float16 embedder. On the H200 (ORT 1.31.1)
# float16 SFace aborted the process with NHWC kernels (prefer_nhwc), cuDNN's frontend found no plan
# for its first convolution with fuse_conv_bias, and the exhaustive algorithm search with the other
# two off still aborted; with all three changed it runs.
CUDA_OPTIONS = (("prefer_nhwc", "0"), ("fuse_conv_bias", "0"), ("cudnn_conv_algo_search", "HEURISTIC"))


def fetch(name: str, fp16: bool = False) -> Path:
    """The embedder model file (or its float16 copy), downloaded, verified and patched once."""
    return FETCHABLE[name](paths.models_dir(), fp16)


class Embedder:
    """One embedding model on one provider: float16 on a GPU, float32 on the CPU (where float16 only
    costs time). Both give the same ``ref`` (the original weights' digest): their vectors agree within
    1e-3 cosine, so a gallery enrolled on a CPU matches faces embedded on a GPU."""

    def __init__(self, name: str, provider: str, threads: int = 0, landmarks: bool = True) -> None:
        self.precision = "fp32" if runtime.select(provider).names[0] == "cpu" else "fp16"
        path = fetch(name, fp16=self.precision == "fp16")
        metadata = models.read_metadata(path)
        self.ref = ModelRef(name, metadata[META_VERSION], metadata[META_WEIGHTS])
        self.plugin = sface.SFace(self.ref)
        self.engine = Engine(
            path,
            (sface.SIZE, sface.SIZE),
            FACES_PER_INFERENCE,
            self.plugin,
            provider,
            threads,
            buckets=BUCKETS,
            cuda_options=CUDA_OPTIONS if self.precision == "fp16" else (),
        )
        self.landmarks = landmarks
        if not landmarks:
            log.warning(
                "the detector gives no landmarks: faces are embedded from box crops, which cannot be aligned; "
                "identities are less reliable than with a landmark model (yunet)"
            )

    def describe(self) -> str:
        how = "aligned by landmarks" if self.landmarks else "box crops"
        return f"{self.ref.name} v{self.ref.version} {self.precision} on {self.engine.provider}, {how}"

    def crops(self, images: Images, faces: Detections, image_of: np.ndarray, warp: Warp = align.warp):
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
