"""A tiny random-weight MogFace file through the real Kafka pipeline, and never a torch import."""

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers.kafka import committed_total, detector_args, detector_config, photos_to, read_topic

from facestream import samples
from facestream.detector_service.config import detector_command
from facestream.schemas import unpack_detection
from facestream.tools.cli import cli

# Runs the detector with `import torch` made impossible: the service path must not need it.
NO_TORCH_DETECT = (
    "import sys; sys.modules['torch'] = None; sys.argv[0] = 'detect';"
    "from facestream.command import run; from facestream.detector_service.cli import detect;"
    "run(detect, 'FACESTREAM_DETECT')"
)


@pytest.fixture(scope="module")
def tiny_mogface(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("mogface") / "mogface-tiny-random.onnx"
    result = CliRunner().invoke(
        cli,
        [
            "export",
            "mogface",
            "--random-init",
            "--height",
            "96",
            "--width",
            "128",
            "--out",
            str(out),
            "--check-batch",
            "1",
        ],
    )
    assert result.exit_code == 0, result.output
    return out


def test_random_weights_are_refused_without_the_flag(tiny_mogface: Path, topics: dict) -> None:
    done = subprocess.run(
        detector_command(detector_config(topics, model=str(tiny_mogface))),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 4
    assert "--random-init" in done.stderr and "--allow-random-weights" in done.stderr


def test_mogface_events_through_kafka(tiny_mogface: Path, topics: dict, bootstrap: str) -> None:
    photos_to(topics["frames"], {"portraits": samples.portraits_dir()}, max_width=640)
    # Random weights score every anchor near 0.5: a low threshold makes boxes to check.
    args = detector_args(topics, model=str(tiny_mogface), allow_random_weights=True, batch=2, score_threshold=0.3)
    done = subprocess.run([sys.executable, "-c", NO_TORCH_DETECT, *args], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "RANDOM WEIGHTS" in done.stderr
    events = [unpack_detection(r.value()) for r in read_topic(bootstrap, topics["detections"], 4)]
    assert len(events) == 4
    assert committed_total(bootstrap, topics["group"], topics["frames"]) == 4
    for event in events:
        assert event.model.name == "mogface" and event.model.version == "mogface"
        assert event.width <= 640 and event.height > 640  # portraits, scaled to <= 640 wide by the producer
        assert event.faces, "a 0.3 threshold on random weights leaves boxes"
        for face in event.faces:
            x0, y0, x1, y1 = face.box
            assert 0 <= x0 < x1 <= event.width and 0 <= y0 < y1 <= event.height
        # Boxes are in frame pixels: the 96x128 network saw the frame ~7x smaller, so they reach far
        # beyond the network's own 128x96 canvas.
        assert max(face.box[3] for face in event.faces) > 200
