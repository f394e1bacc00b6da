"""DetectorConfig is the one source of detect's defaults and checks: the command line is made from it,
and the same checks hold when code builds it directly."""

import pytest

from facestream.config import command_line
from facestream.detector_service.cli import detect
from facestream.detector_service.config import DetectorConfig, detector_command
from facestream.errors import ConfigError


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"batch": 0}, "--batch must be >= 1"),
        ({"max_wait_ms": -1.0}, "--max-wait-ms must be >= 0"),
        ({"provider": "fpga"}, "--provider: 'fpga': give auto, or some of torch, tensorrt, cuda, cpu"),
        ({"decode": "fpga"}, "--decode must be one of auto, gpu, cpu"),
        ({"gpu_decoder": "hw/fast"}, "--gpu-decoder: unknown part 'fast'"),
        ({"score_threshold": 1.5}, "--score-threshold must be <= 1"),
        ({"batch": "8"}, "--batch must be int"),
        ({"model": None}, "--model needs a value"),
    ],
)
def test_bad_values_are_config_errors_naming_the_option(changes: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        DetectorConfig(**changes)


def test_every_option_of_detect_is_a_field_with_the_same_default() -> None:
    fields = DetectorConfig()
    params = {p.name: p for p in detect.params if p.name != "help" and not p.hidden}  # hidden: old names
    assert set(params) == set(vars(fields))
    for name, param in params.items():
        assert param.default == getattr(fields, name), name


def test_the_command_line_round_trips() -> None:
    config = DetectorConfig(batch=16, max_wait_ms=20.0, input_size=(320, 240), allow_random_weights=True)
    args = command_line(config)
    assert args == ["--batch", "16", "--max-wait-ms", "20.0", "--input-size", "320x240", "--allow-random-weights"]
    old_names = {p.name for p in detect.params if p.hidden}  # renamed options, taken by the command's wrapper
    given = {k: v for k, v in detect.make_context("detect", list(args)).params.items() if k not in old_names}
    assert DetectorConfig(**given) == config


def test_detector_command_runs_the_service_module() -> None:
    cmd = detector_command(group="g", batch=4)
    assert cmd[1:] == ["-m", "facestream.detector_service", "--group", "g", "--batch", "4"]


def test_integers_are_taken_where_a_float_is_meant() -> None:
    assert DetectorConfig(max_wait_ms=20).max_wait_ms == 20.0
