"""Taking turns on one machine when pytest-xdist runs tests side by side (``make test`` does): most
tests share it, a test marked ``alone`` (a stack of containers or a cluster of JVMs that keeps both
cores busy, or bounds on time that a loaded machine would stretch) waits for the others to finish and
runs with nothing beside it.

A readers-writer lock over two lock files that every worker opens: a test takes the main lock shared,
an ``alone`` test takes it exclusive. A gate in front of it keeps a waiting ``alone`` test from being
starved: while it waits, no new test gets in.
"""

import fcntl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def turn(folder: Path, alone: bool) -> Iterator[None]:
    """Hold this test's turn for the block: shared with other tests, or the machine to itself."""
    with open(folder / "gate.lock", "a") as gate, open(folder / "tests.lock", "a") as main:
        fcntl.flock(gate, fcntl.LOCK_EX)
        try:
            fcntl.flock(main, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        finally:
            if not alone:
                fcntl.flock(gate, fcntl.LOCK_UN)
        try:
            yield
        finally:
            fcntl.flock(main, fcntl.LOCK_UN)
