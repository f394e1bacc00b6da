"""Batches by poll size with a deadline counted from the batch's first message.

A full batch goes at once; a partial one waits at most ``max_wait_s`` after its first message
arrived, so a quiet camera never waits for a busy one to fill the batch.

``Consumer.consume(n, timeout)`` returns when ``n`` messages are there *or* the timeout passes, so
the batcher first takes what is already queued, then (if nothing was) asks for one message (returns
as soon as anything arrives), and only then for the rest of the batch, until the deadline.

While an earlier batch is still on the device, the caller passes ``stop`` (is that batch done?): the
next batch fills for as long as the device is busy anyway and goes the moment it is free. Under load
batches grow to full size by themselves; at a trickle no frame waits for company it does not need.
"""

import time
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

T = TypeVar("T")

STOP_CHECK_S = 0.001  # how often ``stop`` is asked while a batch fills

# consume(max_messages, timeout_s) -> up to max_messages items, like Consumer.consume.
Consume = Callable[[int, float], Sequence[T]]


class Batcher(Generic[T]):
    def __init__(
        self,
        consume: Consume[T],
        size: int,
        max_wait_s: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._consume = consume
        self.size = size
        self.max_wait_s = max_wait_s
        self._clock = clock

    def next_batch(self, idle_timeout_s: float, stop: Callable[[], bool] | None = None) -> list[T]:
        """Wait up to ``idle_timeout_s`` for a first message, then fill until full, the deadline
        (``max_wait_s`` after the first message) or ``stop()`` turns true."""
        batch = list(self._consume(self.size, 0.0))
        if not batch:
            batch = list(self._consume(1, idle_timeout_s))
            if not batch:
                return batch
        deadline = self._clock() + self.max_wait_s
        while len(batch) < self.size:
            remaining = deadline - self._clock()
            if remaining <= 0 or (stop is not None and stop()):
                break
            wait = remaining if stop is None else min(remaining, STOP_CHECK_S)
            batch.extend(self._consume(self.size - len(batch), wait))
        return batch
