"""The motion gate on real footage and on a quiet scene: what it sends and what it holds back."""

from pathlib import Path

import av
import numpy as np
from helpers.pictures import picture

from facestream.producers.motion import MotionGate


def quiet_scene(first: np.ndarray, count: int, noise: float = 4.0) -> list[av.VideoFrame]:
    """``first`` held for ``count`` frames with sensor noise (Gaussian, ``noise`` grey levels)."""
    rng = np.random.default_rng(3)
    return [picture(np.clip(first + rng.normal(0, noise, first.shape), 0, 255).astype(np.uint8)) for _ in range(count)]


def footage(sample_dir: Path, count: int) -> list[np.ndarray]:
    with av.open(str(sample_dir / "vtest.avi")) as video:
        return [frame.to_ndarray(format="bgr24") for frame, _ in zip(video.decode(video=0), range(count))]


def test_a_quiet_scene_sends_its_first_frame_and_keyframes_only(sample_dir: Path) -> None:
    gate = MotionGate(min_changed=0.001, keyframe_s=1.0)
    frames = quiet_scene(footage(sample_dir, 1)[0], 50)
    sent = [i for i, frame in enumerate(frames) if gate.wants(frame, now_s=i / 10)]  # 10 fps: 5 s
    assert sent == [0, 10, 20, 30, 40], sent


def test_a_phase_brings_the_first_keyframe_forward_only(sample_dir: Path) -> None:
    gate = MotionGate(min_changed=0.001, keyframe_s=1.0, phase_s=0.3)
    frames = quiet_scene(footage(sample_dir, 1)[0], 30)
    assert [i for i, frame in enumerate(frames) if gate.wants(frame, now_s=i / 10)] == [0, 7, 17, 27]


def test_pedestrians_walking_are_sent_and_the_reference_is_the_last_frame_sent(sample_dir: Path) -> None:
    frames = footage(sample_dir, 100)
    gate = MotionGate(min_changed=0.001, keyframe_s=60.0)
    sent = [i for i, frame in enumerate(frames) if gate.wants(picture(frame), now_s=i / 10)]
    assert len(sent) > 80, sent  # people cross the whole scene all the time
    # The same frame twice: nothing changed since the one just sent.
    assert not gate.wants(picture(frames[sent[-1]]), now_s=10.0)
    # A small change against the last frame sent, repeated: held back each time, until it has added up.
    slow = MotionGate(min_changed=0.05, keyframe_s=60.0)
    base = frames[0]
    assert slow.wants(picture(base), 0.0)
    edged = [base.copy() for _ in range(6)]
    for step, frame in enumerate(edged, start=1):
        frame[:, : 25 * step] = 255 - frame[:, : 25 * step]  # a band that widens frame by frame
    verdicts = [bool(slow.wants(picture(frame), 0.1 * step)) for step, frame in enumerate(edged, start=1)]
    assert verdicts == [False, True, False, True, False, True], verdicts
