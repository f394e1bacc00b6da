"""StopOnSignals nested: a stop asked for before the inner loop began reaches it, and a signal after
the loop has ended is caught by the outer guard instead of killing the process."""

import os
import signal

from facestream.signals import StopOnSignals


def test_a_stop_asked_for_before_the_loop_began_reaches_it() -> None:
    with StopOnSignals("start-up") as outer:
        os.kill(os.getpid(), signal.SIGTERM)
        assert outer.requested
        with StopOnSignals("the loop") as inner:
            assert inner.requested


def test_a_signal_after_the_loop_is_caught_by_the_outer_guard() -> None:
    with StopOnSignals("exiting") as outer:
        with StopOnSignals("the loop") as inner:
            assert not inner.requested
        os.kill(os.getpid(), signal.SIGTERM)
        assert outer.requested


def test_handlers_come_back_on_exit() -> None:
    before = signal.getsignal(signal.SIGTERM)
    with StopOnSignals("the loop"):
        assert signal.getsignal(signal.SIGTERM) != before
    assert signal.getsignal(signal.SIGTERM) == before
