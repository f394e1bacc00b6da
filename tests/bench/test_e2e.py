"""bench e2e through a real broker with two CPU replicas: the placement list spreads 20 cameras over
the topic's partitions evenly, and the result says how many cameras each replica held."""

import json
import subprocess
import sys
from pathlib import Path


def test_two_replicas_hold_ten_cameras_each(bootstrap: str, tmp_path: Path) -> None:
    out = tmp_path / "e2e.json"
    cmd = [sys.executable, "-m", "bench", "e2e", "--model", "yunet", "--provider", "cpu", "--replicas", "2"]
    cmd += ["--cameras", "20", "--fps", "1", "--duration", "6", "--batch", "4", "--partitions", "10"]
    cmd += ["--latency-limit-ms", "100000", "--cameras-per-producer", "10", "--out", str(out)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=400)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    (row,) = json.loads(out.read_text())["rows"]
    assert row["cameras_per_replica"] == [10, 10], row
    assert row["not_delivered_10s_after_end"] == 0 and row["events"] == 120, row
