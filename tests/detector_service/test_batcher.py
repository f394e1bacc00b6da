"""The batcher alone, driven by a scripted consume function and a manual clock."""

import pytest

from detector_service.batcher import Batcher


class Script:
    """consume() that returns scripted arrivals and advances a fake clock by each timeout used."""

    def __init__(self, arrivals: list[tuple[float, int]]) -> None:
        self.now = 0.0
        self.arrivals = list(arrivals)  # (time, message id)
        self.calls: list[tuple[int, float]] = []

    def clock(self) -> float:
        return self.now

    def consume(self, n: int, timeout: float) -> list[int]:
        self.calls.append((n, timeout))
        due = [m for t, m in self.arrivals if t <= self.now]
        if not due:
            future = [t for t, _ in self.arrivals if t <= self.now + timeout]
            self.now = min(future) if future else self.now + timeout
            due = [m for t, m in self.arrivals if t <= self.now]
        taken = due[:n]
        self.arrivals = [(t, m) for t, m in self.arrivals if m not in taken]
        return taken


def test_full_batch_goes_at_once() -> None:
    script = Script([(0.0, i) for i in range(8)])
    batch = Batcher(script.consume, size=4, max_wait_s=1.0, clock=script.clock).next_batch(0.5)
    assert batch == [0, 1, 2, 3]
    assert len(script.calls) == 1


def test_partial_batch_waits_until_deadline_from_first_message() -> None:
    script = Script([(0.2, 1), (0.25, 2), (5.0, 3)])
    batch = Batcher(script.consume, size=4, max_wait_s=0.1, clock=script.clock).next_batch(1.0)
    assert batch == [1, 2]
    assert script.now == pytest.approx(0.3)  # first message at 0.2 + 0.1 wait, not 0.1 from the call


def test_late_arrivals_within_deadline_join_the_batch() -> None:
    script = Script([(0.0, 1), (0.05, 2), (0.09, 3), (0.2, 4)])
    assert Batcher(script.consume, size=8, max_wait_s=0.1, clock=script.clock).next_batch(1.0) == [1, 2, 3]


def test_nothing_arrives() -> None:
    script = Script([])
    assert Batcher(script.consume, size=4, max_wait_s=0.1, clock=script.clock).next_batch(0.5) == []
    assert script.calls == [(4, 0.5)]


@pytest.mark.parametrize(("size", "wait"), [(0, 0.1), (4, -1.0)])
def test_rejects_bad_settings(size: int, wait: float) -> None:
    with pytest.raises(ValueError):
        Batcher(lambda n, t: [], size=size, max_wait_s=wait)
