"""Faces cut out of their frames the way an embedder expects them: aligned by the 5 landmarks to a
fixed template, or, for a detector without landmarks, a square crop around the box.

The alignment follows OpenCV's ``FaceRecognizerSF.alignCrop``: the similarity transform (rotation,
uniform scale, translation) that best maps the landmarks onto the template in the least-squares sense
(Umeyama's method), then a bilinear warp. A box crop cannot undo a tilted head and gives less
reliable identities; callers say so when they use it.
"""

import cv2
import numpy as np


def similarity_transform(points: np.ndarray, template: np.ndarray) -> np.ndarray:
    """The 2x3 matrix of the similarity transform taking ``points`` (K, 2) closest to ``template``."""
    src, dst = points.astype(np.float64), template.astype(np.float64)
    src_mean, dst_mean = src.mean(axis=0), dst.mean(axis=0)
    src_c, dst_c = src - src_mean, dst - dst_mean
    covariance = dst_c.T @ src_c / len(src)
    u, s, vt = np.linalg.svd(covariance)
    d = np.ones(2)
    if np.linalg.det(covariance) < 0:
        d[1] = -1
    rotation = u @ np.diag(d) @ vt
    scale = (s * d).sum() / src_c.var(axis=0).sum()
    matrix = np.empty((2, 3))
    matrix[:, :2] = scale * rotation
    matrix[:, 2] = dst_mean - matrix[:, :2] @ src_mean
    return matrix


def aligned(image: np.ndarray, landmarks: np.ndarray, template: np.ndarray, size: int) -> np.ndarray:
    """The ``size`` x ``size`` face whose landmarks land on ``template``."""
    matrix = similarity_transform(landmarks, template)
    return cv2.warpAffine(image, matrix, (size, size), flags=cv2.INTER_LINEAR)


def box_crop(image: np.ndarray, box: np.ndarray, size: int) -> np.ndarray:
    """The square around ``box`` (x0, y0, x1, y1), its longer side, scaled to ``size`` x ``size``."""
    x0, y0, x1, y1 = (float(v) for v in box)
    side = max(x1 - x0, y1 - y0, 1.0)
    scale = size / side
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    matrix = np.array([[scale, 0, size / 2 - scale * cx], [0, scale, size / 2 - scale * cy]])
    return cv2.warpAffine(image, matrix, (size, size), flags=cv2.INTER_LINEAR)
