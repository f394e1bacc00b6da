"""When the guard asks for a fresh rebalance: only after the recovery has read nothing for stall-s."""

from facestream.alerting.recovery_guard import StallClock


def test_a_recovery_that_reads_on_is_never_stalled() -> None:
    clock = StallClock(30.0, _since=0.0)
    assert not any(clock.stalled(True, {"changelog-0": offset}, 10.0 * offset) for offset in range(1, 20))


def test_a_recovery_reading_nothing_for_stall_s_is_stalled_once_per_stall_s() -> None:
    clock = StallClock(30.0, _since=0.0)
    offsets = {"changelog-0": 12}
    assert [clock.stalled(True, offsets, t) for t in (0.0, 5.0, 29.0, 36.0, 40.0, 65.0, 66.0)] == [
        False,
        False,
        False,
        True,  # 36 s on the same offsets (the clock started at the first look, 0 s)
        False,
        False,
        True,  # another 30 s without a record
    ]


def test_no_recovery_no_stall() -> None:
    clock = StallClock(30.0, _since=0.0)
    assert not any(clock.stalled(False, {}, t) for t in (0.0, 100.0, 1000.0))
