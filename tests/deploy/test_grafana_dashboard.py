"""The Grafana dashboard (deploy/grafana/facestream.json): importable as Grafana reads it, every
panel's query valid PromQL (promtool checks each as a recording rule), and every series it asks for
one that a facestream service exports."""

import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "deploy" / "grafana" / "facestream.json"
pytestmark = pytest.mark.prometheus


def queries() -> list[str]:
    board = json.loads(DASHBOARD.read_text())
    return [target["expr"] for panel in board["panels"] for target in panel["targets"]]


def test_the_dashboard_has_what_grafana_imports() -> None:
    board = json.loads(DASHBOARD.read_text())
    assert board["uid"] == "facestream" and board["title"]
    assert [v["name"] for v in board["templating"]["list"]] == ["datasource"]
    ids = [panel["id"] for panel in board["panels"]]
    assert len(ids) == len(set(ids)) >= 12
    for panel in board["panels"]:
        assert panel["datasource"]["uid"] == "${datasource}" and panel["targets"], panel["title"]


def test_every_query_is_promql_over_series_the_services_export(tmp_path: Path) -> None:
    rules = {"groups": [{"name": "dashboard", "rules": []}]}
    for index, expr in enumerate(queries()):
        rules["groups"][0]["rules"].append(
            {"record": f"dashboard:query_{index}", "expr": expr.replace("$__rate_interval", "5m")}
        )
    (tmp_path / "queries.yml").write_text(yaml.safe_dump(rules))
    done = subprocess.run(["promtool", "check", "rules", str(tmp_path / "queries.yml")], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    sources = "\n".join(
        path.read_text()
        for folder in ("facestream", "detector_service", "alerting", "alert_store", "producers")
        for path in (ROOT / folder).rglob("*.py")
    )
    sources = sources.replace("facestream_{events}_events", "facestream_detection_events facestream_pose_events")
    asked = {
        re.sub(r"_(bucket|sum|count|total)$", "", name)
        for expr in queries()
        for name in re.findall(r"facestream_[a-z_]+", expr)
    }
    missing = {name for name in asked if f'"{name}"' not in sources and f"{name} " not in sources}
    assert not missing, f"the dashboard asks for series no service exports: {sorted(missing)}"
