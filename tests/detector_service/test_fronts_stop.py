"""How ``run_fronts`` tells a front it stopped from one that failed, with real processes: SIGTERM is
how the first front stops the others, and it may land before a front has its handler or after it has
let go of it (CI once saw the second: a front flushing its summary was reported as killed)."""

import multiprocessing
import time

from facestream.detector_service.owner.fronts import _failures, _stop


def _idle() -> None:
    time.sleep(60)  # no handler: SIGTERM kills it, as in a front's first or last moments


def _crash() -> None:
    raise SystemExit(3)


def test_a_front_our_sigterm_killed_stopped_as_asked() -> None:
    context = multiprocessing.get_context("spawn")
    front, owner = context.Process(target=_idle), context.Process(target=_crash)
    front.start()
    owner.start()
    owner.join()
    asked = _stop([front])
    assert asked == [front] and front.exitcode < 0
    assert _failures(owner, [front], asked) == ["the GPU owner exited with 3 (its log above says why)"]
    assert _failures(owner, [front]) == [
        "front 1 was killed by SIGTERM",
        "the GPU owner exited with 3 (its log above says why)",
    ]
