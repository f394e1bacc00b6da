"""Start a GPU owner process and get one pipe end per front."""

import multiprocessing
from collections.abc import Callable
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess

from facestream.detector_service.owner import server


def start_owner(build: Callable, fronts: int) -> tuple[BaseProcess, list[Connection]]:
    """The owner, building its processor with ``build`` (picklable: it runs in the new process), and
    the front ends of its ``fronts`` pipes, to hand one to each front (a spawned process takes one as
    an argument)."""
    context = multiprocessing.get_context("spawn")  # a forked child cannot use its parent's CUDA context
    pipes = [context.Pipe() for _ in range(fronts)]
    process = context.Process(target=server.serve, args=(build, [ours for ours, _ in pipes]), name="gpu-owner")
    process.start()
    for ours, _ in pipes:
        ours.close()  # the owner has its own copies now: a front then sees EOF if the owner dies
    return process, [theirs for _, theirs in pipes]
