"""--max-fps-per-camera: at most N frames a second of each camera, newest first, by capture time."""

from facestream.detector_service.kafka.rate_limit import RateLimit
from facestream.schemas import Frame

MS = 1_000_000


def frames(camera: str, times_ms: list[int]) -> list[Frame]:
    return [Frame(camera, seq, t * MS, 64, 48, b"x") for seq, t in enumerate(times_ms)]


def taken(limit: RateLimit, batch: list[Frame]) -> list[tuple[str, int]]:
    skip = limit.over(batch)
    return [(f.camera_id, f.frame_seq) for f in batch if id(f) not in skip]


def test_a_backlog_yields_its_newest_frames_spread_over_it() -> None:
    limit = RateLimit(max_fps=5)  # one frame in 200 ms
    backlog = frames("a", [i * 33 for i in range(30)])  # one second at 30 fps
    assert taken(limit, backlog) == [("a", seq) for seq in (1, 8, 15, 22, 29)]  # the newest always among them


def test_later_batches_keep_the_spacing_from_the_last_frame_taken() -> None:
    limit = RateLimit(max_fps=10)
    assert taken(limit, frames("a", [0, 50])) == [("a", 1)]
    later = [Frame("a", 2 + i, t * MS, 64, 48, b"x") for i, t in enumerate([120, 149, 150, 260])]
    # 260 (newest) is taken, then 150, 110 ms before it and 100 after the 50 taken before; 149 and 120 are too close.
    assert taken(limit, later) == [("a", 4), ("a", 5)]


def test_capture_times_of_today_keep_their_nanoseconds() -> None:
    # 6 frames at 30 fps are 199,999,998 ns apart: under 200 ms, though a float sum of today's clock
    # (about 1.8e18 ns, 256 ns apart as float64) and 200 ms cannot tell.
    limit = RateLimit(max_fps=5)
    now = 1_796_000_000_000_000_000
    batch = [Frame("a", seq, now + seq * 33_333_333, 64, 48, b"x") for seq in (0, 6, 7)]
    assert taken(limit, batch[:1]) == [("a", 0)]
    assert taken(limit, batch[1:]) == [("a", 7)]


def test_cameras_are_limited_each_on_its_own() -> None:
    limit = RateLimit(max_fps=1)
    batch = frames("a", [0, 500, 999]) + frames("b", [0, 10])
    assert taken(limit, batch) == [("a", 2), ("b", 1)]
