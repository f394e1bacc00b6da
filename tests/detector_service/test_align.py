"""The warp that aligns a face: exact for points that are a similarity transform of the template,
least squares for noisy ones, never a mirror image; the host warp samples as its inverse says."""

import cv2
import numpy as np

from facestream.detector_service.decoding import align
from facestream.detector_service.models import sface
from facestream.detector_service.models.base import Detections

RNG = np.random.default_rng(7)


def moved(points: np.ndarray, angle: float, scale: float, shift: tuple[float, float]) -> np.ndarray:
    rotation = scale * np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    return points @ rotation.T + np.array(shift)


def apply(matrix: np.ndarray, points: np.ndarray) -> np.ndarray:
    return points @ matrix[:, :2].T + matrix[:, 2]


def test_points_that_are_a_moved_template_map_back_onto_it_exactly() -> None:
    faces = np.stack(
        [
            moved(sface.TEMPLATE, a, s, (x, y))
            for a, s, x, y in RNG.uniform(-1, 1, (20, 4)) * [3, 1, 300, 300] + [0, 2, 0, 0]
        ]
    )
    for face, matrix in zip(faces, align.similarity_transforms(faces, sface.TEMPLATE)):
        np.testing.assert_allclose(apply(matrix, face), sface.TEMPLATE, atol=1e-6)


def test_noisy_points_get_the_least_squares_similarity() -> None:
    faces = moved(sface.TEMPLATE, 0.3, 2.5, (100, 40))[None] + RNG.normal(0, 3, (10, 5, 2))
    for face, matrix in zip(faces, align.similarity_transforms(faces, sface.TEMPLATE)):
        best = ((apply(matrix, face) - sface.TEMPLATE) ** 2).sum()
        for _ in range(50):  # any nearby similarity fits worse
            a, b, tx, ty = RNG.normal(0, 1e-3, 4)
            nudged = matrix + np.array([[a, -b, tx], [b, a, ty]])
            assert ((apply(nudged, face) - sface.TEMPLATE) ** 2).sum() >= best


def test_mirrored_points_still_get_a_rotation() -> None:
    mirrored = sface.TEMPLATE * [-1, 1]
    matrix = align.similarity_transforms(mirrored[None], sface.TEMPLATE)[0]
    assert np.linalg.det(matrix[:, :2]) > 0


def test_box_matrices_fit_the_longer_side_centred() -> None:
    matrix = align.box_matrices(np.array([[10.0, 20.0, 50.0, 100.0]]), 112)[0]
    np.testing.assert_allclose(apply(matrix, np.array([[30.0, 60.0], [30.0, 20.0]])), [[56, 56], [56, 0]])


def test_face_matrices_use_boxes_without_landmarks() -> None:
    faces = Detections(np.array([[0.0, 0.0, 56.0, 56.0]], np.float32), np.array([0.9], np.float32))
    np.testing.assert_allclose(align.face_matrices(faces, sface.TEMPLATE, 112), [[[2, 0, 0], [0, 2, 0]]])


def test_inverted_matches_opencv_and_the_warp_samples_through_it() -> None:
    matrices = align.similarity_transforms(moved(sface.TEMPLATE, 0.4, 3.0, (200, 100))[None], sface.TEMPLATE)
    inverse = align.inverted(matrices)
    np.testing.assert_allclose(inverse[0], cv2.invertAffineTransform(matrices[0]), atol=1e-9)
    image = RNG.integers(0, 256, (480, 640, 3), dtype=np.uint8)
    crop = align.warp([image], np.array([0]), matrices, 112)[0]
    x, y = apply(inverse[0], np.array([[50.0, 60.0]]))[0]  # crop pixel (50, 60) reads frame pixel (x, y)
    x0, y0 = int(x), int(y)
    ax, ay = x - x0, y - y0
    patch = image[y0 : y0 + 2, x0 : x0 + 2].astype(float)
    expected = (1 - ay) * ((1 - ax) * patch[0, 0] + ax * patch[0, 1]) + ay * ((1 - ax) * patch[1, 0] + ax * patch[1, 1])
    assert np.abs(crop[60, 50] - expected).max() <= 1
