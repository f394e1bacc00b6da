"""A face's quality: what makes it good enough to recognise or enrol, and the words a refusal says."""

from facestream import face_quality as quality
from facestream.schemas import Face

FRONTAL = [[38.3, 51.7], [73.5, 51.5], [56.0, 71.7], [41.5, 92.4], [70.7, 92.2]]  # SFace's template
TURNED = [[38.3, 51.7], [73.5, 51.5], [76.0, 71.7], [41.5, 92.4], [70.7, 92.2]]  # nose beside the left eye


def test_quality_refuses_small_faint_and_turned_faces() -> None:
    frontal, turned = FRONTAL, TURNED
    large = [0, 0, 112, 112]
    assert quality.quality(large, 0.95, frontal) > 0.8
    assert quality.quality([0, 0, 20, 26], 0.95, frontal) == 0.0  # 20 px: too small to recognise
    assert quality.quality(large, 0.5, frontal) == 0.0
    assert quality.quality(large, 0.95, turned) < quality.GOOD
    assert quality.quality(large, 0.95, None) > 0.8  # no landmarks: size and score alone
    assert quality.quality(large, 0.95, frontal, sharpness=5.0) < quality.GOOD  # blurred
    assert quality.quality(large, 0.95, frontal, sharpness=300.0) > 0.8


def test_of_an_alert_s_faces_only_the_good_are_enrolled_and_if_none_is_the_best_says_why() -> None:
    large = Face((0.0, 0.0, 112.0, 112.0), 0.95, tuple(tuple(p) for p in FRONTAL))
    small = Face((0.0, 0.0, 30.0, 36.0), 0.95)
    turned = Face((0.0, 0.0, 112.0, 112.0), 0.95, tuple(tuple(p) for p in TURNED))
    assert quality.enrollable([small, large, turned]) == ([large], None)
    good, why = quality.enrollable([small, turned])
    assert good == [] and why is not None and why.startswith("the face is too small (30 px")
    assert quality.enrollable([]) == ([], None)


def test_a_blurred_face_is_refused_saying_so() -> None:
    blurred = Face((0.0, 0.0, 112.0, 112.0), 0.95, tuple(tuple(p) for p in FRONTAL), sharpness=3.0)
    good, why = quality.enrollable([blurred])
    assert good == [] and why is not None and why.startswith("the face is too blurred (sharpness 3; 20 or more")


def test_the_batch_quality_is_each_face_s_quality() -> None:
    """``qualities`` (the detector's, a batch at once) gives what ``quality`` gives face by face."""
    import numpy as np

    rng = np.random.default_rng(3)
    corners = rng.uniform(0, 400, (200, 2))
    boxes = np.concatenate([corners, corners + rng.uniform(5, 150, (200, 2))], axis=1)
    scores, sharp = rng.uniform(0.3, 1, 200), rng.uniform(0, 40, 200)
    marks = corners[:, None, :] + rng.uniform(0, 100, (200, 5, 2))
    marks[0, 1] = marks[0, 0]  # both eyes on one point: seen from the side
    expected = [quality.quality(tuple(b), s, m.tolist(), h) for b, s, m, h in zip(boxes, scores, marks, sharp)]
    assert np.allclose(quality.qualities(boxes, scores, marks, sharp), expected)
    plain = [quality.quality(tuple(b), s) for b, s in zip(boxes, scores)]
    assert np.allclose(quality.qualities(boxes, scores), plain)
