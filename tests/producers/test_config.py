"""ProducerConfig: the one source of produce's defaults and checks, and the command line made from it."""

import pytest

from facestream.errors import ConfigError
from facestream.producers.cli import produce
from facestream.producers.config import ProducerConfig, producer_command


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"jpeg_quality": 0}, "--jpeg-quality must be >= 1"),
        ({"jpeg_quality": 101}, "--jpeg-quality must be <= 100"),
        ({"max_width": -1}, "--max-width must be >= 0"),
        ({"fps": -1.0}, "--fps must be >= 0"),
        ({"frame_size": "640x480"}, "--frame-size must be tuple"),
        ({"frame_size": (0, 480)}, "--frame-size: width and height must be >= 1"),
    ],
)
def test_bad_values_are_config_errors(changes: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        ProducerConfig(**changes)


def test_every_option_but_the_camera_pairs_is_a_field() -> None:
    params = {p.name for p in produce.params if not p.hidden} - {"help", "cameras", "sources"}  # hidden: old names
    assert params == set(vars(ProducerConfig()))


def test_producer_command_pairs_cameras_with_sources() -> None:
    cmd = producer_command([("a", "x.mp4"), ("b", "photos/")], fps=5.0, loop=True)
    assert cmd[1:] == [
        "-m",
        "facestream.producers",
        "--fps",
        "5.0",
        "--loop",
        "--camera",
        "a",
        "--source",
        "x.mp4",
        "--camera",
        "b",
        "--source",
        "photos/",
    ]
