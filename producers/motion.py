"""Send only the frames that matter: a camera's frame goes out when its scene changed since the last
frame it sent, and at least every keyframe interval, so a quiet camera still proves it is alive.

Frame differencing at low resolution, on the edge CPU: each picture is shrunk by a whole factor to
between ``WIDTH`` and twice that across, as grey (FFmpeg's scaler averages the decoder's luma plane
in one pass, which takes sensor noise away) and lightly blurred, then compared with the last frame
*sent*, not the previous one, so a slow change (a person edging in, the light going) adds up until it
is sent. A pixel counts as changed when its grey level moved more than ``PIXEL_DELTA``; the frame goes
when at least ``min_changed`` of its pixels did. ``python -m bench gate`` measures its cost a frame.
"""

from typing import Any

import numpy as np
from av.video.reformatter import VideoReformatter

from facestream.producers.encoder import planes_of

WIDTH = 160  # the fewest pixels across the comparison is made at
PIXEL_DELTA = 25  # grey levels (of 255) a pixel must move to count as changed: well over sensor noise


class MotionGate:
    """One camera's gate: ``wants`` says, frame by frame, whether it should be sent."""

    def __init__(self, min_changed: float, keyframe_s: float, phase_s: float = 0.0) -> None:
        """``phase_s`` brings the first keyframe forward by that much, so the cameras of one producer,
        started together, do not all send their keyframes at the same instant."""
        self.min_changed = min_changed
        self.keyframe_s = keyframe_s
        self.phase_s = phase_s
        self._reference: np.ndarray | None = None  # the last frame sent, as compared
        self._sent_at = 0.0
        self._scaler = VideoReformatter()  # keeps FFmpeg's scaling context: made anew, it costs 0.6 ms a frame

    def wants(self, picture: Any, now_s: float) -> bool:
        """True to send ``picture`` (an ``av.VideoFrame`` captured at monotonic ``now_s``): the first
        frame, a keyframe, or a changed scene; the frame sent becomes what later frames are compared with."""
        small = comparable(picture, self._scaler)
        send = (
            self._reference is None
            or small.shape != self._reference.shape
            or now_s - self._sent_at >= self.keyframe_s
            or changed_fraction(small, self._reference) >= self.min_changed
        )
        if send:
            self._sent_at = now_s - self.phase_s if self._reference is None else now_s
            self._reference = small
        return bool(send)


def changed_fraction(a: np.ndarray, b: np.ndarray) -> float:
    """The fraction of pixels whose grey level differs by more than PIXEL_DELTA between two comparable frames."""
    return np.count_nonzero(np.abs(a - b) > PIXEL_DELTA) / a.size


def comparable(picture: Any, scaler: VideoReformatter) -> np.ndarray:
    """The picture grey, shrunk and blurred (a 3x3 binomial kernel, the border mirrored), as int16."""
    factor = max(1, picture.width // WIDTH)
    small = scaler.reformat(
        picture, picture.width // factor, max(1, picture.height // factor), "gray", interpolation="AREA"
    )
    grey = np.pad(planes_of(small)[0].astype(np.int16), 1, mode="symmetric")
    rows = grey[:-2] + 2 * grey[1:-1] + grey[2:]
    return (rows[:, :-2] + 2 * rows[:, 1:-1] + rows[:, 2:] + 8) >> 4
