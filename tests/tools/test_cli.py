"""Every command answers --help with examples, quickly, and config flows from file and env."""

import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from facestream.config import options
from facestream.dashboard.config import DashboardConfig
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
    ["config", "show"],
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


def test_the_dashboard_draws_the_zones_and_lines_the_alerting_section_gives_its_cameras(tmp_path: Path) -> None:
    config = tmp_path / "facestream.toml"
    door, entrance = [[0, 0], [0.5, 0], [0.5, 1]], [[0.5, 0], [0.5, 1]]
    config.write_text(f"[alerting.cameras.gate]\nzones = {{ door = {door} }}\nlines = {{ entrance = {entrance} }}\n")
    assert load_config(config)["dashboard"] == {
        "zones": {"gate": {"door": door}},
        "lines": {"gate": {"entrance": entrance}},
    }
    config.write_text(f"[alerting.cameras.gate]\nzones = {{ door = {door} }}\n")
    assert load_config(config)["dashboard"] == {"zones": {"gate": {"door": door}}}
    config.write_text(f"[alerting.cameras.gate]\nzones = {{ door = {door} }}\n[dashboard.zones]\nhall = {{}}\n")
    assert load_config(config)["dashboard"] == {"zones": {"hall": {}}}  # its own, if it has them


def test_an_unknown_key_is_an_error_naming_it_and_the_valid_ones(tmp_path: Path) -> None:
    config = tmp_path / "facestream.toml"
    config.write_text("[detect]\nbacth = 16\n")
    with pytest.raises(ConfigError, match=r"\[detect\] has no key 'bacth'; valid keys: allow-random-weights, batch,"):
        load_config(config)
    config.write_text("[produce]\nsasl-password = 'x'\n")
    with pytest.raises(ConfigError, match="no key 'sasl-password'"):
        load_config(config)


def test_a_subcommand_table_is_checked_too(tmp_path: Path) -> None:
    config = tmp_path / "facestream.toml"
    config.write_text("[models.build-engine]\nbatch = 4\n")
    assert load_config(config) == {"models": {"build-engine": {"batch": 4}}}
    config.write_text("[models.build-engine]\nbacth = 4\n")
    with pytest.raises(ConfigError, match=r"\[models.build-engine\] has no key 'bacth'"):
        load_config(config)
    config.write_text("[models.buildengine]\nbatch = 4\n")
    with pytest.raises(ConfigError, match=r"valid: \[models.build-engine\], \[models.fetch\]"):
        load_config(config)


def test_a_bad_value_from_the_environment_is_a_usage_error() -> None:
    result = CliRunner().invoke(cli, ["detect"], env={"FACESTREAM_DETECT_BATCH": "0"})
    assert result.exit_code == 2 and "'--batch': 0 is not in the range x>=1" in result.output


def test_usage_errors_exit_2() -> None:
    result = CliRunner().invoke(cli, ["produce", "--camera", "a", "--camera", "b", "--source", "x"])
    assert result.exit_code == 2 and "one --source per --camera" in result.output
    result = CliRunner().invoke(cli, ["detect", "--input-size", "640by480"])
    assert result.exit_code == 2 and "WIDTHxHEIGHT" in result.output
    result = CliRunner().invoke(cli, ["detect", "--gpu-decoder", "hw/fast"])
    assert result.exit_code == 2 and "expected keep, first, native, tN, cN or dN" in result.output
    result = CliRunner().invoke(cli, ["produce", "--camera", "a", "--source", "x", "--frame-size", "0x480"])
    assert result.exit_code == 2 and "must be >= 1" in result.output


def test_service_path_never_imports_torch() -> None:
    code = (
        "import sys\n"
        "import facestream.detector_service.service, facestream.detector_service.cli\n"
        "import facestream.detector_service.models, facestream.producers.streamer, facestream.producers.cli\n"
        "import facestream.tools.demo, facestream.tools.events\n"
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


@click.command()
@options(DashboardConfig, only=("http_port", "http_host", "groups_interval_s"))
def _dashboard_ports(**values) -> None:
    """The dashboard's renamed settings as its command reads them."""
    config = DashboardConfig(**values)
    click.echo(f"{config.http_host}:{config.http_port} every {config.groups_interval_s:g} s")


@pytest.mark.parametrize(
    ("how", "args", "env", "defaults"),
    [
        ("flag", ["--port", "9000", "--groups-interval", "3"], {}, None),
        ("variable", [], {"FACESTREAM_DASHBOARD_PORT": "9000", "FACESTREAM_DASHBOARD_GROUPS_INTERVAL": "3"}, None),
        ("file key", [], {}, "[dashboard]\nport = 9000\ngroups-interval = 3.0\n"),
    ],
)
def test_a_renamed_option_still_takes_its_old_name_with_a_warning(
    how: str, args: list[str], env: dict, defaults: str | None, tmp_path: Path
) -> None:
    default_map = None
    if defaults is not None:  # read as the new names: every reader of the file sees one name (e.g. kafka acls)
        (tmp_path / "facestream.toml").write_text(defaults)
        default_map = load_config(tmp_path / "facestream.toml")["dashboard"]
        assert default_map == {"http_port": 9000, "groups_interval_s": 3.0}
    result = CliRunner().invoke(
        _dashboard_ports, args, env=env, auto_envvar_prefix="FACESTREAM_DASHBOARD", default_map=default_map
    )
    assert result.exit_code == 0, result.output
    assert "127.0.0.1:9000 every 3 s" in result.output, how
    if defaults is None:  # the file's keys were translated (and warned about) as it was read
        assert "--port (or its variable or key) is now --http-port" in result.output
        assert "--groups-interval (or its variable or key) is now --groups-interval-s" in result.output


def test_the_new_names_say_nothing_and_the_old_ones_stay_out_of_help(tmp_path: Path) -> None:
    result = CliRunner().invoke(_dashboard_ports, ["--http-port", "9001"])
    assert result.output == "127.0.0.1:9001 every 2 s\n"
    shown = CliRunner().invoke(_dashboard_ports, ["--help"]).output
    assert "--http-port" in shown and "--port" not in shown.replace("--http-port", "")
    (tmp_path / "facestream.toml").write_text("[dashboard]\nprot = 1\n")
    with pytest.raises(ConfigError) as refused:
        load_config(tmp_path / "facestream.toml")
    assert "http-port" in str(refused.value) and "'port'" not in str(refused.value).split("valid keys:")[1]
