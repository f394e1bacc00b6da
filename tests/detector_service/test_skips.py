"""Skipped frames announced by their camera's next event: once each, and in order while batches overlap."""

from facestream.detector_service.kafka.skips import SkippedRuns


def test_a_run_of_skips_is_announced_once_by_the_next_event() -> None:
    runs = SkippedRuns()
    for seq in (1, 2, 3):
        runs.skipped("gate", seq)
    runs.taken("gate")  # frame 4
    assert runs.announced_by("gate", 4) == 3
    assert runs.announced_by("gate", 4) == 0  # a replayed event announces nothing again


def test_skips_after_a_frame_in_flight_wait_for_the_event_after_it() -> None:
    runs = SkippedRuns()
    runs.skipped("gate", 1)
    runs.taken("gate")  # frame 2, its event not built yet
    runs.skipped("gate", 3)  # the next batch skips frames 3 and 4 meanwhile
    runs.skipped("gate", 4)
    runs.taken("gate")  # frame 5
    assert runs.announced_by("gate", 2) == 1
    assert runs.announced_by("gate", 5) == 2


def test_cameras_keep_their_own_runs() -> None:
    runs = SkippedRuns()
    runs.skipped("gate", 7)
    runs.skipped("yard", 2)
    runs.skipped("yard", 3)
    assert runs.announced_by("yard", 4) == 2
    assert runs.announced_by("gate", 8) == 1
    assert runs.announced_by("door", 1) == 0  # a camera that skipped nothing


def test_an_event_before_a_run_leaves_it_for_a_later_one() -> None:
    runs = SkippedRuns()
    runs.taken("gate")  # frame 1: nothing skipped yet, nothing to close
    runs.skipped("gate", 2)
    assert runs.announced_by("gate", 1) == 0
    assert runs.announced_by("gate", 3) == 1
