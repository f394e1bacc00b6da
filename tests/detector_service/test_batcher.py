"""The batcher alone, driven by a scripted consume function and a manual clock."""

import pytest

from facestream.detector_service.kafka.batcher import Batcher


class Script:
    """consume(n, timeout) with librdkafka's semantics on a fake clock: it returns once n messages have
    arrived, or when the timeout passes with what arrived by then."""

    def __init__(self, arrivals: list[tuple[float, int]]) -> None:
        self.now = 0.0
        self.arrivals = list(arrivals)  # (time, message id)
        self.calls: list[tuple[int, float]] = []

    def clock(self) -> float:
        return self.now

    def consume(self, n: int, timeout: float) -> list[int]:
        self.calls.append((n, timeout))
        times = sorted(t for t, _ in self.arrivals)
        if len(times) >= n and times[n - 1] <= self.now + timeout:
            self.now = max(self.now, times[n - 1])  # the n-th message is there in time
        else:
            self.now += timeout
        due = [m for t, m in self.arrivals if t <= self.now]
        taken = due[:n]
        self.arrivals = [(t, m) for t, m in self.arrivals if m not in taken]
        return taken


def test_full_batch_goes_at_once() -> None:
    script = Script([(0.0, i) for i in range(8)])
    batch = Batcher(script.consume, size=4, max_wait_s=1.0, clock=script.clock).next_batch(0.5)
    assert batch == [0, 1, 2, 3]
    assert script.now == 0.0  # nothing waited


def test_a_lone_message_does_not_wait_for_the_idle_timeout() -> None:
    # The first call asks for one message: it must not block for a full batch (a real bug: 450 ms p50
    # capture-to-event latency at 4 frames/s with batch 4 and 100 ms max wait).
    script = Script([(0.05, 1)])
    batch = Batcher(script.consume, size=4, max_wait_s=0.1, clock=script.clock).next_batch(0.5)
    assert batch == [1]
    assert script.now == pytest.approx(0.15)  # arrival + max wait, not the 0.5 s idle timeout
    assert script.calls[:2] == [(4, 0.0), (1, 0.5)]  # what is queued (nothing), then one message


def test_partial_batch_waits_until_deadline_from_first_message() -> None:
    script = Script([(0.2, 1), (0.25, 2), (5.0, 3)])
    batch = Batcher(script.consume, size=4, max_wait_s=0.1, clock=script.clock).next_batch(1.0)
    assert batch == [1, 2]
    assert script.now == pytest.approx(0.3)  # first message at 0.2 + 0.1 wait, not 0.1 from the call


def test_late_arrivals_within_deadline_join_the_batch() -> None:
    script = Script([(0.0, 1), (0.05, 2), (0.09, 3), (0.2, 4)])
    assert Batcher(script.consume, size=8, max_wait_s=0.1, clock=script.clock).next_batch(1.0) == [1, 2, 3]


def test_what_is_queued_goes_together() -> None:
    # A backlog must come out in full batches (a real bug: a detector behind by 35,000 frames ran
    # batches of one, because a batch taken while another was in flight asked for a single message).
    script = Script([(0.0, i) for i in range(3)])
    assert Batcher(script.consume, size=4, max_wait_s=0.0, clock=script.clock).next_batch(0.0) == [0, 1, 2]


def test_filling_stops_when_the_device_is_free() -> None:
    script = Script([(0.0, 1), (0.005, 2), (0.05, 3)])
    free_at = 0.01  # the batch in flight finishes here
    batcher = Batcher(script.consume, size=4, max_wait_s=0.1, clock=script.clock)
    assert batcher.next_batch(0.0, stop=lambda: script.now >= free_at) == [1, 2]
    assert script.now == pytest.approx(0.01, abs=0.0015)  # checked every ms: not the 100 ms deadline


def test_no_batch_in_flight_and_nothing_queued() -> None:
    script = Script([(0.02, 1)])
    assert Batcher(script.consume, size=4, max_wait_s=0.1, clock=script.clock).next_batch(0.0, stop=lambda: True) == []


def test_nothing_arrives() -> None:
    script = Script([])
    assert Batcher(script.consume, size=4, max_wait_s=0.1, clock=script.clock).next_batch(0.5) == []
    assert script.calls == [(4, 0.0), (1, 0.5)]
