"""Stopping on purpose: SIGINT and SIGTERM ask a loop to finish what it holds, rather than
interrupting it wherever it happens to be (a half-sent batch, an uncommitted offset)."""

import logging
import signal

log = logging.getLogger(__name__)


class StopOnSignals:
    """While entered, SIGINT/SIGTERM set ``requested`` (and log ``then``); the previous handlers
    come back on exit. ``with StopOnSignals("flushing, then stopping") as stop: while not stop.requested: ...``

    Nested, the inner one starts out requested when the outer one already was: a process that guards its
    whole life (start-up and exit included) with an outer one passes a stop asked for during start-up
    on to its loop, and a signal after the loop has ended no longer kills it halfway through exiting."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self, then: str) -> None:
        self.then = then
        self.requested = False
        self._previous: dict = {}

    def __enter__(self) -> "StopOnSignals":
        self._previous = {sig: signal.signal(sig, self._on_signal) for sig in self.SIGNALS}
        outer = {getattr(handler, "__self__", None) for handler in self._previous.values()}
        self.requested = any(isinstance(o, StopOnSignals) and o.requested for o in outer)
        return self

    def __exit__(self, *_exc) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)

    def _on_signal(self, signum, _frame) -> None:
        log.info("%s received: %s", signal.Signals(signum).name, self.then)
        self.requested = True
