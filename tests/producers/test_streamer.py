"""The producer's pacing, seen through a real broker: cameras start out of step, spread over a period."""

from pathlib import Path

import numpy as np
from kafka_helpers import read_topic

from facestream.producers.config import ProducerConfig
from facestream.producers.streamer import Streamer
from facestream.schemas import unpack_frame


def test_cameras_start_spread_over_one_period(bootstrap: str, topics: dict, sample_dir: Path) -> None:
    cameras, fps = 4, 5.0  # a period of 200 ms: first frames about 50 ms apart
    photo = str(sample_dir / "obama.jpg")
    config = ProducerConfig(fps=fps, topic=topics["frames"], max_frames=1, stats_interval=60.0)
    streamer = Streamer([(f"cam-{i}", photo) for i in range(cameras)], config, bootstrap=bootstrap)
    assert streamer.run().acked == cameras
    frames = [unpack_frame(r.value()) for r in read_topic(bootstrap, topics["frames"], cameras)]
    starts = np.array(sorted(f.capture_ts_ns for f in frames)) / 1e6
    gaps = np.diff(starts)
    assert sorted(f.camera_id for f in frames) == [f"cam-{i}" for i in range(cameras)]
    assert gaps.min() > 25 and starts[-1] - starts[0] < 1000 / fps, gaps  # spread, all within one period
