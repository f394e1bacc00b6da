"""Faces cut out of their frames the way an embedder expects them: aligned by the 5 landmarks to a
fixed template, or, for a detector without landmarks, a square crop around the box.

The cut is two steps, so the GPU path can share the first: ``face_matrices`` finds each face's warp
(host arithmetic on a few points), then ``warp`` (here, on the host) or ``align_gpu.GpuWarper`` (on the
device, from the decoded frames) applies it. The alignment follows OpenCV's
``FaceRecognizerSF.alignCrop``: the similarity transform (rotation, uniform scale, translation) that
best maps the landmarks onto the template in the least-squares sense (Umeyama's method), then a
bilinear warp with black outside the frame. A box crop cannot undo a tilted head and gives less
reliable identities; callers say so when they use it.
"""

import cv2
import numpy as np

from facestream.detector_service.decoding.placements import HostImages
from facestream.detector_service.models.base import Detections


def similarity_transforms(points: np.ndarray, template: np.ndarray) -> np.ndarray:
    """(F, 2, 3): for each face's points (F, K, 2), the similarity transform taking them closest to
    ``template`` (K, 2) in the least-squares sense. In 2-D, Umeyama's SVD solution with its reflection
    guard reduces to a closed form, [[a, -b], [b, a]], so a whole batch is a few array operations."""
    src, dst = points.astype(np.float64), template.astype(np.float64)
    src_mean, dst_mean = src.mean(axis=1, keepdims=True), dst.mean(axis=0)
    src_c, dst_c = src - src_mean, dst - dst_mean
    norm = np.maximum((src_c**2).sum(axis=(1, 2)), 1e-12)
    a = (src_c * dst_c).sum(axis=(1, 2)) / norm
    b = (src_c[..., 0] * dst_c[:, 1] - src_c[..., 1] * dst_c[:, 0]).sum(axis=1) / norm
    matrices = np.empty((len(src), 2, 3))
    matrices[:, 0, 0], matrices[:, 0, 1], matrices[:, 1, 0], matrices[:, 1, 1] = a, -b, b, a
    matrices[:, :, 2] = dst_mean - np.einsum("fij,fj->fi", matrices[:, :, :2], src_mean[:, 0])
    return matrices


def box_matrices(boxes: np.ndarray, size: int) -> np.ndarray:
    """(F, 2, 3): for each box (x0, y0, x1, y1), the matrix taking the square around it (its longer
    side) onto ``size`` x ``size``."""
    boxes = boxes.astype(np.float64)
    sides = np.maximum(np.maximum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]), 1.0)
    scale = size / sides
    matrices = np.zeros((len(boxes), 2, 3))
    matrices[:, 0, 0] = matrices[:, 1, 1] = scale
    matrices[:, 0, 2] = size / 2 - scale * (boxes[:, 0] + boxes[:, 2]) / 2
    matrices[:, 1, 2] = size / 2 - scale * (boxes[:, 1] + boxes[:, 3]) / 2
    return matrices


def face_matrices(faces: Detections, template: np.ndarray, size: int, use_landmarks: bool = True) -> np.ndarray:
    """(F, 2, 3) float64: each face's warp from frame pixels to its crop, by landmarks when there are any."""
    if use_landmarks and faces.landmarks is not None:
        return similarity_transforms(faces.landmarks, template)
    return box_matrices(faces.boxes, size)


def inverted(matrices: np.ndarray) -> np.ndarray:
    """(F, 2, 3): the inverse of each affine map (crop pixels -> frame pixels), as a warp samples it."""
    linear = np.linalg.inv(matrices[:, :, :2])
    return np.concatenate([linear, -np.einsum("fij,fj->fi", linear, matrices[:, :, 2])[:, :, None]], axis=2)


def warp(images: HostImages | list[np.ndarray], image_of: np.ndarray, matrices: np.ndarray, size: int) -> np.ndarray:
    """(F, size, size, 3) uint8: face i warped out of ``images[image_of[i]]`` by ``matrices[i]``, on the host."""
    out = np.empty((len(matrices), size, size, 3), np.uint8)
    for i, (image, matrix) in enumerate(zip(image_of.tolist(), matrices)):
        out[i] = cv2.warpAffine(images[image], matrix, (size, size), flags=cv2.INTER_LINEAR)
    return out
