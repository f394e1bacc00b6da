"""The README generator: a run stopped at a time limit never reaches the README."""

import json
from pathlib import Path

import pytest

from bench import report, save


def test_a_stopped_run_is_refused_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    results = tmp_path / "bench" / "results"
    save({"benchmark": "engine", "rows": [{"batch": 1}], "complete": False}, results / "engine-x.json")
    save({"benchmark": "kafka", "complete": True}, results / "kafka-x.json")
    monkeypatch.setattr(report, "ROOT", tmp_path)
    with pytest.raises(SystemExit, match="engine-x.json"):
        report.load()


def test_finished_and_older_runs_load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    results = tmp_path / "bench" / "results"
    save({"benchmark": "kafka", "complete": True}, results / "kafka-x.json")
    (results / "older.json").write_text(json.dumps({"benchmark": "kafka"}))  # from before "complete" existed
    monkeypatch.setattr(report, "ROOT", tmp_path)
    assert sorted(report.load()) == ["kafka-x.json", "older.json"]
