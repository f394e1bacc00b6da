"""Every command answers --help with examples, quickly, and config flows from file and env."""

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from facestream.errors import ConfigError
from facestream.tools.cli import SUBCOMMANDS, cli, load_config

COMMANDS = [[name] for name in SUBCOMMANDS] + [
    ["kafka", "start"],
    ["kafka", "status"],
    ["models", "fetch"],
    ["models", "build-engine"],
    ["samples", "fetch"],
    ["export", "mogface"],
    ["export", "flops"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_help(command: list[str]) -> None:
    result = CliRunner().invoke(cli, [*command, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage:" in result.output


@pytest.mark.parametrize("command", ["produce", "detect", "demo", "events", "kafka"])
def test_help_has_examples(command: str) -> None:
    assert "Example" in CliRunner().invoke(cli, [command, "--help"]).output


def test_top_level_help_imports_nothing_heavy() -> None:
    code = (
        "import sys; from facestream.tools.cli import main; sys.argv = ['facestream', '--help'];\n"
        "try: main()\nexcept SystemExit: pass\n"
        "heavy = [m for m in ('onnxruntime', 'cv2', 'torch', 'confluent_kafka') if m in sys.modules]\n"
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().endswith("[]")


def test_config_file_sets_defaults(tmp_path: Path) -> None:
    config = tmp_path / "facestream.toml"
    config.write_text("[detect]\nbatch = 16\nmax-wait-ms = 20.0\n")
    assert load_config(config) == {"detect": {"batch": 16, "max_wait_ms": 20.0}}
    config.write_text("[detet]\nbatch = 1\n")
    with pytest.raises(ConfigError, match="unknown section"):
        load_config(config)


def test_usage_errors_exit_2() -> None:
    result = CliRunner().invoke(cli, ["produce", "--camera", "a", "--camera", "b", "--source", "x"])
    assert result.exit_code == 2 and "one --source per --camera" in result.output
    result = CliRunner().invoke(cli, ["detect", "--input-size", "640by480"])
    assert result.exit_code == 2 and "WIDTHxHEIGHT" in result.output
    result = CliRunner().invoke(cli, ["detect", "--gpu-decoder", "hw/fast"])
    assert result.exit_code == 2 and "expected keep or tN" in result.output
    result = CliRunner().invoke(cli, ["produce", "--camera", "a", "--source", "x", "--frame-size", "0x480"])
    assert result.exit_code == 2 and "must be >= 1" in result.output


def test_service_path_never_imports_torch() -> None:
    code = (
        "import sys\n"
        "import facestream.detector_service.service, detector_service.cli, detector_service.models\n"
        "import facestream.producers.streamer, producers.cli, facestream.tools.demo, facestream.tools.events\n"
        "print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_build_engine_warms_every_bucket(yunet_path) -> None:
    result = CliRunner().invoke(
        cli, ["models", "build-engine", "--model", "yunet", "--batch", "4", "--provider", "cpu"]
    )
    assert result.exit_code == 0, result.output
    assert "yunet v2023mar on cpu, input 640x480: buckets [4] ready" in result.output
