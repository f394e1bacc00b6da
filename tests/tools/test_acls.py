"""``facestream kafka acls``' grants, worked out from the services' settings (the broker's side is
tests/e2e/test_acls.py)."""

import tomllib
from pathlib import Path

from click.testing import CliRunner

from facestream.tools.acls import grants, pipeline_topics
from facestream.tools.cli import cli

ROOT = Path(__file__).resolve().parents[2]


def topics_of(role: list, operation: str) -> set[str]:
    return {g.name for g in role if g.kind == "topic" and operation in g.operations and not g.prefix}


def test_no_role_but_the_cameras_writes_frames_and_none_but_alerting_writes_alerts() -> None:
    every = grants({})
    assert [r for r, role in every.items() if "frames" in topics_of(role, "WRITE")] == ["camera"]
    assert [r for r, role in every.items() if "alerts" in topics_of(role, "WRITE")] == ["alerting"]
    assert topics_of(every["dashboard"], "WRITE") == {"faces.gallery"}  # taught from the page
    assert not topics_of(every["notifier"], "WRITE")
    assert topics_of(every["camera"], "READ") == set()


def test_a_topic_renamed_in_the_config_file_moves_its_grants() -> None:
    settings = {
        "produce": {"frames_topic": "frames.gate"},
        **{c: {"frames_topic": "frames.gate"} for c in ("detect", "pose")},
    }
    every = grants(settings)
    assert topics_of(every["camera"], "WRITE") == {"frames.gate", "camera-status"}
    assert topics_of(every["detector"], "READ") == {"frames.gate"}
    assert pipeline_topics(settings)["frames.gate"] == 4 and pipeline_topics(settings)["faces.gallery"] == 1


def test_cameras_may_write_each_frames_topic_a_service_reads() -> None:
    # The compose stack's corridor streams to a topic of its own for the pose service.
    every = grants(tomllib.loads((ROOT / "deploy" / "secure" / "pipeline.toml").read_text()))
    assert topics_of(every["camera"], "WRITE") == {"frames", "frames.corridor", "camera-status"}
    assert topics_of(every["pose"], "READ") == {"frames.corridor"}
    assert {"frames", "frames.corridor"} <= topics_of(every["dashboard"], "READ")


def test_a_dry_run_prints_every_grant_and_changes_nothing(tmp_path) -> None:
    config = tmp_path / "facestream.toml"
    config.write_text('[detect]\ngroup = "gpu-detectors"\n')
    result = CliRunner().invoke(
        cli, ["--config", str(config), "kafka", "acls", "--user", "camera=edge", "--dry-run"], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    assert "User:edge" in result.output and "group gpu-detectors" in result.output
    assert "transactional_id gpu-detectors.*" in result.output


def test_an_unknown_role_is_refused() -> None:
    result = CliRunner().invoke(cli, ["kafka", "acls", "--user", "janitor=bob", "--dry-run"])
    assert result.exit_code != 0 and "ROLE=USER" in result.output
