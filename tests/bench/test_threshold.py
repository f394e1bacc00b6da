"""The threshold benchmark's arithmetic: pairs by kind, and error rates per threshold."""

import numpy as np

from bench.threshold import pairs, rates, variants


def unit(*values: float) -> np.ndarray:
    vector = np.asarray(values, np.float32)
    return vector / np.linalg.norm(vector)


def test_pairs_are_sorted_into_one_person_in_two_photos_or_one_and_two_people() -> None:
    faces = [
        {"person": "a", "photo": "a1", "vector": unit(1, 0)},
        {"person": "a", "photo": "a1", "vector": unit(1, 0.1)},
        {"person": "a", "photo": "a2", "vector": unit(1, 1)},
        {"person": "b", "photo": "b1", "vector": unit(0, 1)},
    ]
    kinds = pairs(faces)
    assert [len(kinds[k]) for k in ("one person, two photos", "one person, one photo", "two people")] == [2, 1, 3]
    assert np.isclose(kinds["one person, one photo"][0], float(unit(1, 0) @ unit(1, 0.1)))


def test_a_false_match_is_two_people_at_or_over_the_threshold_and_a_false_stranger_one_person_under_it() -> None:
    kinds = {"one person, two photos": [0.4, 0.6, 0.8, 0.9], "one person, one photo": [], "two people": [0.1, 0.5]}
    (row,) = rates(kinds, (0.5,))
    assert row == {"threshold": 0.5, "one person, two photos": 0.25, "one person, one photo": None, "two people": 0.5}


def test_every_variant_keeps_the_photo_and_says_its_jpeg_quality() -> None:
    image = np.zeros((100, 80, 3), np.uint8)
    found = variants(image)
    assert set(found) == {"original", "flipped", "cropped", "jpeg-60", "jpeg-30", "half", "quarter"}
    assert found["cropped"][0].shape == (80, 64, 3) and found["quarter"][0].shape == (25, 20, 3)
    assert found["jpeg-30"][1] == 30
