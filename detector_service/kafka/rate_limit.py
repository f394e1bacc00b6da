"""``--max-fps-per-camera N``: which frames of a batch to skip so that no camera gets more than N a second.

Newest first: in each batch, a camera's newest frame is taken if it was captured at least 1/N s after
that camera's latest frame taken before, and each older frame if it lies at least 1/N s before the
newer one taken; so a backlog yields its latest frames, spread over it, instead of its oldest. Only
capture times count, never arrival, so the rule is the same for a live stream and a backlog.
"""

from facestream.schemas import Frame


class RateLimit:
    def __init__(self, max_fps: float) -> None:
        self.interval_ns = round(1e9 / max_fps)  # an integer: capture times (~1.8e18 ns) exceed a float's precision
        self._last_taken_ns: dict[str, int] = {}  # camera -> capture time of its latest frame taken

    def over(self, frames: list[Frame]) -> set[int]:
        """The ids (``id(frame)``) of the frames in ``frames`` (a batch, in each camera's order) to skip."""
        by_camera: dict[str, list[Frame]] = {}
        for frame in frames:
            by_camera.setdefault(frame.camera_id, []).append(frame)
        skip = set()
        for camera, group in by_camera.items():
            last = self._last_taken_ns.get(camera)
            floor = None if last is None else last + self.interval_ns
            ceiling = None  # an older frame must lie this early: 1/N s before the newer one taken
            for frame in reversed(group):
                ts = frame.capture_ts_ns
                if (floor is not None and ts < floor) or (ceiling is not None and ts > ceiling):
                    skip.add(id(frame))
                    continue
                if ceiling is None:
                    self._last_taken_ns[camera] = ts
                ceiling = ts - self.interval_ns
        return skip
