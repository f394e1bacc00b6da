"""The line benchmark's scoring: a counted crossing matches one true crossing, within the tolerance."""

from bench import line


def test_each_true_crossing_is_matched_once_and_only_near_in_time() -> None:
    first, second = line.CROSSINGS[0], line.CROSSINGS[1]
    counted = [
        {"frame": first + 2},  # matches the first
        {"frame": first + 3},  # the first is taken, and the second is too far: extra
        {"frame": second + 20},  # 2 s late: extra
        {"frame": 10},  # before the scored part: left out
    ]
    score = line._score(counted)
    assert (score["counted"], score["matched"], score["extra"]) == (3, 1, 2)
    assert score["missed_frames"] == list(line.CROSSINGS[1:])
    assert score["recall"] == round(1 / len(line.CROSSINGS), 3)
