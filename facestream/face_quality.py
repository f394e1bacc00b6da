"""How much a face can be trusted for recognition (and enrolment): its size, detection score, sharpness
and how frontal it is.

Small, blurry or turned faces give embeddings that match the wrong people: Frigate's users saw 92-100%
false matches from 22x28 px crops. Each factor runs from 0 (useless) to 1 (as good as it gets) and the
quality is the worst of them, so a face that fails one fails: size is the box's shorter side between
``SMALL_PX`` and ``LARGE_PX``; the score between ``LOW_SCORE`` and 1; sharpness (the variance of the
Laplacian of the embedder's aligned 112x112 crop, which the detector measures and the event carries)
between ``BLURRED`` and ``SHARP``; frontal pose from the five
landmarks (eyes, nose, mouth corners, YuNet's order): the nose's offset from the middle of the eyes
and mouth, across (yaw) and along (pitch) the face, in eye distances. A face under ``GOOD`` counts
neither for recognition nor for enrolment. A face without landmarks (MogFace) is judged without its
pose, one without a sharpness (no embedder, or an older detector) without its sharpness.
"""

from collections.abc import Sequence

import numpy as np

SMALL_PX, LARGE_PX = 24.0, 80.0  # a face this small is useless; this large, as good as size makes it
LOW_SCORE = 0.5
# bench threshold blurs the sample photos more and more: crops under 5 kept a median 0.16 of the sharp
# photo's likeness, from 10 a median 0.86 (docs/alerting.md, "Quality")
BLURRED, SHARP = 4.0, 20.0
MAX_YAW, MAX_PITCH = 0.6, 0.8  # the nose's offset, in eye distances, at which a face is too turned to use
GOOD = 0.3  # the threshold: a face under it is refused


def quality(
    box: Sequence[float],
    score: float,
    landmarks: Sequence[Sequence[float]] | None = None,
    sharpness: float | None = None,
) -> float:
    """The worst of the size, score, sharpness and pose factors, from 0 to 1."""
    return min(size_factor(box), score_factor(score), sharpness_factor(sharpness), pose_factor(landmarks))


def enrollable(faces: Sequence) -> tuple[list, str | None]:
    """Of ``faces`` (each with ``box``, ``score``, ``landmarks`` and ``sharpness``), those good enough to
    enrol, and, when none is, why the best of them is not."""
    good = [face for face in faces if refused(face.box, face.score, face.landmarks, face.sharpness) is None]
    if good or not faces:
        return good, None
    best = max(faces, key=lambda face: quality(face.box, face.score, face.landmarks, face.sharpness))
    return [], refused(best.box, best.score, best.landmarks, best.sharpness)


def refused(
    box: Sequence[float],
    score: float,
    landmarks: Sequence[Sequence[float]] | None = None,
    sharpness: float | None = None,
) -> str | None:
    """None for a face good enough to recognise or enrol; else why not, in words for a person."""
    factors = {
        f"too small ({min(box[2] - box[0], box[3] - box[1]):.0f} px; {LARGE_PX:.0f} or more is best)": size_factor(box),
        f"too faint for the detector (score {score:.2f})": score_factor(score),
        f"too blurred (sharpness {sharpness or 0:.0f}; {SHARP:.0f} or more is best)": sharpness_factor(sharpness),
        "turned away from the camera": pose_factor(landmarks),
    }
    worst = min(factors, key=lambda reason: factors[reason])
    if factors[worst] >= GOOD:
        return None
    return f"the face is {worst}: quality {factors[worst]:.2f}, under the {GOOD} a face needs"


def size_factor(box: Sequence[float]) -> float:
    shorter = min(box[2] - box[0], box[3] - box[1])
    return _ramp(shorter, SMALL_PX, LARGE_PX)


def score_factor(score: float) -> float:
    return _ramp(score, LOW_SCORE, 1.0)


def sharpness_factor(sharpness: float | None) -> float:
    """1 for a crop with the detail an embedding needs, falling to 0 as blur takes it; 1 when unmeasured."""
    return 1.0 if sharpness is None else _ramp(sharpness, BLURRED, SHARP)


def pose_factor(landmarks: Sequence[Sequence[float]] | None) -> float:
    """1 for a frontal face, falling to 0 as the nose leaves the middle of the face (head turned or
    tilted up or down); 1 without the five points to judge by."""
    if landmarks is None or len(landmarks) < 5:
        return 1.0
    (rx, ry), (lx, ly), (nx, ny), (mrx, mry), (mlx, mly) = (tuple(p) for p in landmarks[:5])
    eyes = ((rx + lx) / 2, (ry + ly) / 2)
    mouth = ((mrx + mlx) / 2, (mry + mly) / 2)
    across = (lx - rx, ly - ry)  # the eye line: the face's own horizontal, whatever its roll
    width = (across[0] ** 2 + across[1] ** 2) ** 0.5
    if width < 1e-6:
        return 0.0  # both eyes on one point: seen from the side
    unit = (across[0] / width, across[1] / width)
    centre = ((eyes[0] + mouth[0]) / 2, (eyes[1] + mouth[1]) / 2)
    offset = (nx - centre[0], ny - centre[1])
    yaw = abs(offset[0] * unit[0] + offset[1] * unit[1]) / width
    pitch = abs(-offset[0] * unit[1] + offset[1] * unit[0]) / width
    return min(_ramp(MAX_YAW - yaw, 0.0, MAX_YAW / 2), _ramp(MAX_PITCH - pitch, 0.0, MAX_PITCH / 2))


def qualities(
    boxes: np.ndarray, scores: np.ndarray, landmarks: np.ndarray | None = None, sharpness: np.ndarray | None = None
) -> np.ndarray:
    """``quality`` of many faces at once, as arrays: (F, 4) boxes, (F,) scores, (F, 5+, 2) landmarks and
    (F,) sharpness, the last two optional as for one face. Where the detector decides which faces to
    embed, a Python call per face would cost more than the decision saves."""
    boxes = np.asarray(boxes, np.float64).reshape(-1, 4)
    shorter = np.minimum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1])
    found = np.minimum(_ramps(shorter, SMALL_PX, LARGE_PX), _ramps(np.asarray(scores, np.float64), LOW_SCORE, 1.0))
    if sharpness is not None:
        found = np.minimum(found, _ramps(np.asarray(sharpness, np.float64), BLURRED, SHARP))
    if landmarks is not None and len(landmarks) and np.shape(landmarks)[1] >= 5:
        found = np.minimum(found, _poses(np.asarray(landmarks, np.float64)))
    return found


def _poses(landmarks: np.ndarray) -> np.ndarray:
    """``pose_factor`` of (F, 5+, 2) landmarks."""
    right_eye, left_eye, nose, mouth_right, mouth_left = (landmarks[:, i] for i in range(5))
    across = left_eye - right_eye
    width = np.hypot(across[:, 0], across[:, 1])
    unit = across / np.maximum(width, 1e-6)[:, None]
    offset = nose - (right_eye + left_eye + mouth_right + mouth_left) / 4
    yaw = np.abs((offset * unit).sum(axis=1)) / np.maximum(width, 1e-6)
    pitch = np.abs(-offset[:, 0] * unit[:, 1] + offset[:, 1] * unit[:, 0]) / np.maximum(width, 1e-6)
    found = np.minimum(_ramps(MAX_YAW - yaw, 0.0, MAX_YAW / 2), _ramps(MAX_PITCH - pitch, 0.0, MAX_PITCH / 2))
    return np.where(width < 1e-6, 0.0, found)


def _ramps(values: np.ndarray, low: float, high: float) -> np.ndarray:
    return np.clip((values - low) / (high - low), 0.0, 1.0)


def _ramp(value: float, low: float, high: float) -> float:
    """0 at or under ``low``, 1 at or over ``high``, linear between."""
    return min(max((value - low) / (high - low), 0.0), 1.0)
