"""A real Prometheus (Debian's ``prometheus``) for a test: it scrapes the services the test runs and
evaluates facestream's rules, and the test asks its HTTP API what it found (see ``pythonpath`` in
pyproject)."""

import json
import re
import shutil
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import yaml

from helpers.http import free_port

RULES = Path(__file__).resolve().parents[2] / "deploy" / "prometheus" / "facestream-rules.yml"


def quicker_rules(speed: int = 30) -> dict:
    """facestream-rules.yml with its times divided by ``speed`` (``for: 5m`` -> ``10s``, rate windows
    to at least 20 s: four scrapes at 5 s) and its lag thresholds by 10: the same rules, on a test's
    clock and a test's volume."""

    def seconds(text: str) -> int:
        value, unit = int(text[:-1]), text[-1]
        return value * {"s": 1, "m": 60, "h": 3600}[unit]

    def scaled(match: re.Match) -> str:
        return f"[{max(20, seconds(match[1]) // speed)}s]"

    rules = yaml.safe_load(RULES.read_text())
    for group in rules["groups"]:
        for rule in group["rules"]:
            rule["expr"] = re.sub(r"\[(\d+[smh])\]", scaled, rule["expr"])
            rule["expr"] = re.sub(
                r"(facestream:consumer_lag:sum\{[^}]*\} >) (\d+)", lambda m: f"{m[1]} {int(m[2]) // 10}", rule["expr"]
            )
            if "for" in rule:
                rule["for"] = f"{max(1, seconds(rule['for']) // speed)}s"
    return rules


def check_metrics(text: str) -> None:
    """``promtool check metrics`` on a /metrics text: the exposition parses and follows Prometheus's
    naming rules (units, ``_total`` counters), as an operator's lint would report it."""
    done = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


class Prometheus:
    def __init__(self, port: int) -> None:
        self.base = f"http://127.0.0.1:{port}"

    def get(self, path: str, **params: str) -> dict:
        url = f"{self.base}{path}?{urllib.parse.urlencode(params)}"
        with urllib.request.urlopen(url, timeout=10) as response:
            answer = json.loads(response.read())
        assert answer["status"] == "success", answer
        return answer["data"]

    def query(self, expr: str) -> list[dict]:
        return self.get("/api/v1/query", query=expr)["result"]

    def firing(self) -> dict[str, list[dict]]:
        """The alerts firing now, by name, with their labels."""
        found: dict[str, list[dict]] = {}
        for alert in self.get("/api/v1/alerts")["alerts"]:
            if alert["state"] == "firing":
                found.setdefault(alert["labels"]["alertname"], []).append(alert["labels"])
        return found


@contextmanager
def prometheus(folder: Path, jobs: dict[str, list[int]], interval_s: int = 1) -> Iterator[Prometheus]:
    """Prometheus scraping each job's ports on 127.0.0.1 every ``interval_s`` and evaluating
    ``quicker_rules()`` as often; stopped at the end."""
    binary = shutil.which("prometheus")
    assert binary, "prometheus missing: apt-get install prometheus (tests/system-packages.sh does)"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "rules.yml").write_text(yaml.safe_dump(quicker_rules()))
    config = {
        "global": {"scrape_interval": f"{interval_s}s", "evaluation_interval": f"{interval_s}s"},
        "rule_files": ["rules.yml"],
        "scrape_configs": [
            {"job_name": job, "static_configs": [{"targets": [f"127.0.0.1:{port}" for port in ports]}]}
            for job, ports in jobs.items()
        ],
    }
    (folder / "prometheus.yml").write_text(yaml.safe_dump(config))
    port = free_port()
    log = open(folder / "prometheus.log", "wb")
    process = subprocess.Popen(
        [binary, f"--config.file={folder / 'prometheus.yml'}", f"--storage.tsdb.path={folder / 'data'}",
         f"--web.listen-address=127.0.0.1:{port}"],
        stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/-/ready", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            assert process.poll() is None and time.monotonic() < deadline, (folder / "prometheus.log").read_text()[
                -3000:
            ]
            time.sleep(0.3)
        yield Prometheus(port)
    finally:
        process.terminate()
        process.wait(30)
        log.close()
