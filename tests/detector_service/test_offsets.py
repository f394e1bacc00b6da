from facestream.detector_service.kafka.offsets import OffsetTracker

TP = ("frames", 0)


def test_commits_only_past_acknowledged_frames() -> None:
    tracker = OffsetTracker()
    for offset in (10, 11, 12):
        tracker.track(TP, offset)
    assert tracker.committable() == {TP: 10}  # nothing done yet: stay at the first in flight
    tracker.done(TP, 11)
    tracker.done(TP, 12)
    assert tracker.committable() == {TP: 10}  # 10 is still in flight: later acks do not count
    tracker.done(TP, 10)
    assert tracker.committable() == {TP: 13}


def test_reports_only_changes() -> None:
    tracker = OffsetTracker()
    tracker.track(TP, 0)
    tracker.done(TP, 0)
    ready = tracker.committable()
    tracker.mark_committed(ready)
    assert tracker.committable() == {}
    tracker.track(TP, 1)
    tracker.done(TP, 1)
    assert tracker.committable() == {TP: 2}


def test_partitions_are_independent_and_forgettable() -> None:
    tracker = OffsetTracker()
    other = ("frames", 1)
    tracker.track(TP, 5)
    tracker.track(other, 7)
    tracker.done(other, 7)
    assert tracker.committable() == {TP: 5, other: 8}
    tracker.forget([TP])
    tracker.done(TP, 5)  # a late ack for a revoked partition is ignored
    assert tracker.committable() == {other: 8}
    assert tracker.in_flight() == 0


def test_a_commit_in_flight_is_not_offered_again_and_one_that_failed_is() -> None:
    # A real defect: an asynchronous commit counted as done when sent, so one that then failed was never
    # tried again, not even by the final synchronous commit (the offsets had not changed).
    tracker = OffsetTracker()
    tracker.track(TP, 0)
    tracker.done(TP, 0)
    tracker.mark_sent(tracker.committable())
    assert tracker.committable() == {} and tracker.committable(again=True) == {TP: 1}
    tracker.answered(TP, 1, ok=False)
    assert tracker.committable() == {TP: 1}  # offered again
    tracker.mark_sent({TP: 1})
    tracker.answered(TP, 1, ok=True)
    assert tracker.committable() == {} and tracker.committable(again=True) == {}
