"""Frames a camera skipped between its events, so that each event can say how many came before it.

A skipped frame (too old, over the camera's rate, passed over by ``--every-nth``) has no event of its
own; the camera's next event announces it (``skipped_before``). With batches pipelined, frames after
an event's frame may be skipped before that event is built, so a camera's skips are kept as runs:
consecutive skips join one run, a frame taken closes it (its event announces the run), and an event
announces the runs that ended before its frame. There are never more runs than frames in flight.
"""

from collections import deque
from dataclasses import dataclass


@dataclass
class _Run:
    last_seq: int  # the highest frame number in the run
    frames: int  # how many frames it holds
    open: bool = True  # whether the camera's next skip joins it


class SkippedRuns:
    """Per camera, the runs of skipped frames not yet announced, oldest first."""

    def __init__(self) -> None:
        self._runs: dict[str, deque[_Run]] = {}

    def skipped(self, camera_id: str, frame_seq: int) -> None:
        """Frame ``frame_seq`` of the camera was skipped: it joins the camera's open run or starts one."""
        runs = self._runs.setdefault(camera_id, deque())
        if runs and runs[-1].open:
            runs[-1].last_seq, runs[-1].frames = frame_seq, runs[-1].frames + 1
        else:
            runs.append(_Run(frame_seq, 1))

    def taken(self, camera_id: str) -> None:
        """A frame of the camera was taken: its event announces the open run; later skips start another."""
        runs = self._runs.get(camera_id)
        if runs:
            runs[-1].open = False

    def announced_by(self, camera_id: str, frame_seq: int) -> int:
        """How many of the camera's frames skipped before frame ``frame_seq`` its event announces
        (they are forgotten: each skip is announced once)."""
        runs = self._runs.get(camera_id)
        count = 0
        while runs and runs[0].last_seq < frame_seq:
            count += runs.popleft().frames
        return count
