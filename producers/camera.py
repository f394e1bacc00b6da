"""One camera of a producer: what it reads, when its next frame is due, and what became of its frames.

A file or image camera is read when a frame is due (``read``); a live camera's reader runs on its
own and the sender takes its newest picture (``take``). Either way the camera has one state, as the
status records, the metrics and the stats line show it.
"""

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from facestream.counters import counter
from facestream.producers.live import LiveSource, LiveStatus, Picture
from facestream.producers.motion import MotionGate
from facestream.producers.sources import CaptureSource, ImageSource


@dataclass
class Camera:
    camera_id: str
    source: ImageSource | CaptureSource | LiveSource  # shared by the cameras that name the same source
    next_seq: int
    source_name: str = ""  # the source as people may see it: credentials masked
    sent: int = counter("", "facestream_producer_frames_sent", "Frames sent to Kafka")
    late: int = 0
    refused: int = counter(
        "", "facestream_producer_frames_refused", "Frames never sent (over --max-frame-bytes, or refused by the client)"
    )
    failed: int = counter("", "facestream_producer_frames_failed", "Frames the broker did not take")
    gated: int = counter(
        "", "facestream_producer_frames_gated", "Frames held back by the motion gate (the scene had not changed)"
    )
    held: int = 0  # of those, the ones since the camera's last frame sent: its next frame's skipped_before
    gate: MotionGate | None = None
    due: float = 0.0
    done: bool = False
    ended: bool = False  # done because its file source ran out (not stopped by --max-frames or a signal)
    waiting: bool = False  # a live camera whose frame is due, waiting for a picture newer than its last
    taken: int = 0  # a live camera: the number of the last picture it took
    last_frame_ts_ns: int | None = None  # capture time of its last frame sent
    partition: int = -1  # of the frames topic, from the placement list; -1: where its key's hash puts it
    _frames: Iterator[tuple[str | None, Any]] | None = field(default=None, repr=False)

    @property
    def live(self) -> LiveSource | None:
        return self.source if isinstance(self.source, LiveSource) else None

    def read(self, loop: bool) -> tuple[str | None, Any] | None:
        """A file camera's next (key, frame), reopening the source at its end when looping; None when finished."""
        assert not isinstance(self.source, LiveSource)
        for _attempt in range(2):
            if self._frames is None:
                self._frames = self.source.frames()
            frame = next(self._frames, None)
            if frame is not None:
                return frame
            self._frames = None
            if not loop:
                return None
        return None

    def take(self) -> Picture | None:
        """A live camera's newest picture if it is newer than the last one it took; None to wait for one."""
        live = self.live
        assert live is not None
        picture = live.newest(after=self.taken)
        if picture is None:
            return None
        self.taken = picture.index
        return picture

    def state(self) -> str:
        """One of the camera states of ``schemas.CAMERA_STATES``."""
        live = self.live
        if live is not None and live.status().state == "failed":
            return "failed"
        if self.done:
            return "ended" if self.ended else "stopped"
        return "streaming" if live is None else live.status().state

    def live_status(self) -> LiveStatus | None:
        live = self.live
        return None if live is None else live.status()
