"""The alert rules shipped for Prometheus (deploy/prometheus/), checked and unit-tested by Debian's
promtool: each alert fires on made-up series where it should, and stays quiet where it should not; and
the example scrape configuration for the compose stack is valid."""

import subprocess
from pathlib import Path

import pytest
import yaml

RULES = Path(__file__).resolve().parents[2] / "deploy" / "prometheus"
pytestmark = pytest.mark.prometheus


def promtool(*args: str) -> str:
    done = subprocess.run(["promtool", *args], capture_output=True, text=True, cwd=RULES, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_the_rules_are_valid_and_their_unit_tests_pass() -> None:
    assert "SUCCESS: 11 rules found" in promtool("check", "rules", "facestream-rules.yml")
    assert "SUCCESS" in promtool("test", "rules", "facestream-rules.test.yml")
    assert "is valid prometheus config file" in promtool("check", "config", "prometheus.yml")  # the compose example


def test_every_alert_has_a_case_that_fires_and_one_that_does_not() -> None:
    rules = yaml.safe_load((RULES / "facestream-rules.yml").read_text())
    alerts = {rule["alert"] for group in rules["groups"] for rule in group["rules"] if "alert" in rule}
    cases = yaml.safe_load((RULES / "facestream-rules.test.yml").read_text())["tests"]
    fired, quiet = set(), set()
    for case in cases:
        series = len(case["input_series"])
        for check in case["alert_rule_test"]:
            firing = len(check["exp_alerts"])
            (fired if firing else quiet).add(check["alertname"])
            if 0 < firing < series:  # some of the case's series must not fire
                quiet.add(check["alertname"])
    assert len(alerts) >= 7
    assert alerts <= fired, f"no case fires {sorted(alerts - fired)}"
    assert alerts <= quiet, f"no case keeps {sorted(alerts - quiet)} quiet"
