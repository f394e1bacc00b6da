"""The producer seen through a real broker: cameras start out of step, spread over a period; a frame
that cannot be sent costs its camera that frame, never the process or the other cameras."""

from pathlib import Path

import cv2
import numpy as np
import pytest
from helpers.kafka import read_topic

from facestream import kafka_topics
from facestream.producers.config import ProducerConfig
from facestream.producers.streamer import Streamer
from facestream.schemas import unpack_frame


@pytest.mark.alone  # bounds on time: a starved process wakes its cameras' threads together
def test_cameras_start_spread_over_one_period(bootstrap: str, topics: dict, sample_dir: Path) -> None:
    cameras, fps = 4, 5.0  # a period of 200 ms: first frames about 50 ms apart
    photo = str(sample_dir / "obama.jpg")
    config = ProducerConfig(fps=fps, frames_topic=topics["frames"], max_frames=1, stats_interval_s=60.0)
    streamer = Streamer([(f"cam-{i}", photo) for i in range(cameras)], config, bootstrap=bootstrap)
    assert streamer.run().acked == cameras
    frames = [unpack_frame(r.value()) for r in read_topic(bootstrap, topics["frames"], cameras)]
    starts = np.array(sorted(f.capture_ts_ns for f in frames)) / 1e6
    gaps = np.diff(starts)
    assert sorted(f.camera_id for f in frames) == [f"cam-{i}" for i in range(cameras)]
    # Spread about 50 ms apart, all within one period. A loaded machine (three pytest workers on two
    # cores) wakes a camera's thread tens of ms late: one gap of 22 ms was seen, so the spread is
    # judged by the median gap, and the smallest only has to be clearly more than none.
    assert gaps.min() > 10 and 30 < np.median(gaps) < 70 and starts[-1] - starts[0] < 1000 / fps, gaps


def noise_jpeg(path: Path, width: int, height: int) -> Path:
    """A JPEG of random pixels at quality 100: about 2.5 bytes a pixel, the largest a JPEG gets."""
    image = np.random.default_rng(0).integers(0, 256, (height, width, 3), dtype=np.uint8)
    cv2.imwrite(str(path), image, [cv2.IMWRITE_JPEG_QUALITY, 100])
    return path


def test_a_frame_over_the_limit_is_refused_for_its_camera_only(
    bootstrap: str, topics: dict, sample_dir: Path, tmp_path: Path, caplog
) -> None:
    # A real bug: an 18 MB JPEG made the client raise MSG_SIZE_TOO_LARGE out of produce(), and the
    # process died with the healthy camera's stream.
    big = noise_jpeg(tmp_path / "big.jpg", 4000, 3000)
    assert big.stat().st_size > 16 * 1024 * 1024
    config = ProducerConfig(
        fps=0.0, frames_topic=topics["frames"], max_frames=3, loop=True, max_width=0, jpeg_quality=100
    )
    streamer = Streamer([("big", str(big)), ("ok", str(sample_dir / "obama.jpg"))], config, bootstrap=bootstrap)
    stats = streamer.run()
    frames = [unpack_frame(r.value()) for r in read_topic(bootstrap, topics["frames"], 3)]
    report = {"acked": stats.acked, "refused": stats.refused, "delivery errors": stats.errors}
    assert report == {"acked": 3, "refused": 3, "delivery errors": 0}, report
    assert {f.camera_id for f in frames} == {"ok"}
    assert "camera big: frame" in caplog.text and "over --max-frame-bytes" in caplog.text
    assert "big=0 (3 refused)" in stats.line(streamer.cameras)


def test_a_frame_the_broker_refuses_is_named_by_camera_and_frame(
    bootstrap: str, sample_dir: Path, tmp_path: Path, caplog
) -> None:
    # A topic with Kafka's default 1 MB limit: a 2.4 MB frame is refused by the broker, not the client.
    topic = f"t-{tmp_path.name[-10:]}-1mb.frames"
    kafka_topics.ensure_topics({topic: 1}, bootstrap, configs={topic: {"max.message.bytes": str(1024 * 1024)}})
    big = noise_jpeg(tmp_path / "big.jpg", 1000, 1000)
    config = ProducerConfig(
        fps=0.0, frames_topic=topic, max_frames=2, loop=True, max_width=0, jpeg_quality=100, start_seq=7
    )
    streamer = Streamer([("big", str(big)), ("ok", str(sample_dir / "obama.jpg"))], config, bootstrap=bootstrap)
    stats = streamer.run()
    assert (stats.acked, stats.errors) == (2, 2)
    assert "camera big: frame 7 not delivered" in caplog.text and "MSG_SIZE_TOO_LARGE" in caplog.text
    assert "big=2 (2 failed)" in stats.line(streamer.cameras)


def test_the_motion_gate_sends_a_quiet_camera_its_keyframes_and_says_what_it_held_back(
    bootstrap: str, topics: dict, sample_dir: Path, tmp_path: Path
) -> None:
    capture = cv2.VideoCapture(str(sample_dir / "vtest.avi"))
    first = capture.read()[1]
    capture.release()
    quiet = tmp_path / "quiet.avi"  # the street's first frame held for 2 s, with sensor noise
    writer = cv2.VideoWriter(str(quiet), cv2.VideoWriter_fourcc(*"MJPG"), 20, (first.shape[1], first.shape[0]))
    rng = np.random.default_rng(1)
    for _ in range(40):
        writer.write(np.clip(first + rng.normal(0, 4, first.shape), 0, 255).astype(np.uint8))
    writer.release()
    config = ProducerConfig(
        fps=20.0, frames_topic=topics["frames"], start_seq=0, motion_gate=True, keyframe_s=0.5, stats_interval_s=60.0
    )
    streamer = Streamer([("quiet", str(quiet))], config, bootstrap=bootstrap)
    stats = streamer.run()
    frames = sorted(
        (unpack_frame(r.value()) for r in read_topic(bootstrap, topics["frames"], 4)), key=lambda f: f.frame_seq
    )
    seqs = [f.frame_seq for f in frames]
    assert 4 <= len(frames) <= 5 and seqs[0] == 0, seqs  # the first frame, then one each 0.5 s
    assert [f.skipped_before for f in frames] == [0, *(b - a - 1 for a, b in zip(seqs, seqs[1:]))]
    assert (stats.sent, stats.gated) == (len(frames), 40 - len(frames))
    assert "held back by the motion gate" in stats.line(streamer.cameras)
