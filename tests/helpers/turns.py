"""Taking turns on one machine when pytest-xdist runs tests side by side (``make test`` does): most
tests share it, a test marked ``alone`` (a stack of containers or a cluster of JVMs that keeps both
cores busy, or bounds on time that a loaded machine would stretch) waits for the others to finish and
runs with nothing beside it.

A readers-writer lock over two lock files that every worker opens: a test takes the main lock shared,
an ``alone`` test takes it exclusive. A gate in front of it keeps a waiting ``alone`` test from being
starved: while it waits, no new test gets in; and while an ``alone`` test waits to reach the gate
(``alone-waiting-<pid>``), no other test goes for it, so alone tests follow each other directly.

The wait for a turn has a deadline of its own and is not part of the test's time (tests/conftest.py
takes the turn before pytest-timeout starts its clock): a test that waited behind slow ``alone`` tests
on a loaded machine is not reported as a test that hung, and one that waited too long says for whom.
"""

import contextlib
import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

TURN_WAIT_S = 2400.0  # the longest a test waits for its turn: several alone tests of up to 600 s each
POLL_S = 0.2


class TurnTimeout(Exception):
    """No turn within ``TURN_WAIT_S``; the message says which test held the machine."""


@contextmanager
def turn(folder: Path, alone: bool, nodeid: str = "", wait_s: float = TURN_WAIT_S) -> Iterator[None]:
    """Hold this test's turn for the block: shared with other tests, or the machine to itself."""
    deadline = time.monotonic() + wait_s
    holder = folder / "alone-holder.txt"
    waiting = folder / f"alone-waiting-{os.getpid()}"
    if alone:
        waiting.touch()
    else:
        _after_alone_tests_waiting(folder, deadline, holder)
    with open(folder / "gate.lock", "a") as gate, open(folder / "tests.lock", "a") as main:
        try:
            _lock(gate, fcntl.LOCK_EX, deadline, holder, "the gate (an alone test waits for its turn or runs)")
            try:
                _lock(main, fcntl.LOCK_EX if alone else fcntl.LOCK_SH, deadline, holder, "the tests under way")
            finally:
                if not alone:
                    fcntl.flock(gate, fcntl.LOCK_UN)
        finally:
            waiting.unlink(missing_ok=True)
        if alone:
            holder.write_text(f"{nodeid} (pid {os.getpid()}) since {time.strftime('%H:%M:%S')}")
        try:
            yield
        finally:
            if alone:
                holder.unlink(missing_ok=True)
            fcntl.flock(main, fcntl.LOCK_UN)


class Held:
    """A worker's turn kept from one test to the next: an ``alone`` file's module fixtures (a stack of
    containers, a cluster) go on running between its tests, so no other test may run beside them then."""

    def __init__(self) -> None:
        self._stack = contextlib.ExitStack()
        self._held = False

    def take(self, folder: Path, alone: bool, nodeid: str) -> None:
        """Take a turn unless this worker holds one already (kept for this test by the one before)."""
        if not self._held:
            self._stack.enter_context(turn(folder, alone, nodeid))
            self._held = True

    def release(self) -> None:
        self._stack.close()
        self._held = False


def _after_alone_tests_waiting(folder: Path, deadline: float, holder: Path) -> None:
    """Let the alone tests waiting go first: when one ends, the next alone test, not a test of the
    worker it ran on (whose next test takes the gate at once), gets the machine."""
    while any(_alive(path) for path in folder.glob("alone-waiting-*")):
        if time.monotonic() >= deadline:
            raise TurnTimeout(f"no turn on the machine: alone tests still waiting; holding it alone: {_who(holder)}")
        time.sleep(POLL_S)


def _alive(waiting: Path) -> bool:
    """Whether the worker that left ``waiting`` (``alone-waiting-<pid>``) still runs."""
    try:
        os.kill(int(waiting.name.rsplit("-", 1)[1]), 0)
    except (ProcessLookupError, ValueError):
        return False
    return True


def _who(holder: Path) -> str:
    try:
        return holder.read_text()
    except FileNotFoundError:
        return "no alone test (tests beside each other)"


def _lock(file: IO, mode: int, deadline: float, holder: Path, what: str) -> None:
    """``flock`` with a deadline: TurnTimeout naming what it waited for and the alone test holding it."""
    waited = time.monotonic()
    while True:
        try:
            fcntl.flock(file, mode | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise TurnTimeout(
                    f"no turn on the machine after {time.monotonic() - waited:.0f} s waiting for {what}; "
                    f"holding it alone: {_who(holder)}"
                ) from None
            time.sleep(POLL_S)
