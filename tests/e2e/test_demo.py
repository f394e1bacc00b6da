"""The main job a new user runs (`make demo` runs `facestream demo`), on the test broker."""

import subprocess
import sys


def test_demo_streams_real_photos_and_prints_events(bootstrap: str, yunet_path, sample_dir) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "facestream", "demo", "--duration", "30", "--fps", "2"],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [line for line in done.stdout.splitlines() if "face(s)" in line]
    assert len(lines) >= 10, done.stdout
    assert any(line.startswith("portraits") for line in lines) and any(line.startswith("annotated") for line in lines)
    assert "0 face(s)" not in done.stdout  # every sample photo holds a face
    assert "events (portraits)" in done.stderr and "Kafka keeps running" in done.stderr
    # Obama is enrolled, Biden is not: the portraits camera shows a stranger (a new alert on a fresh
    # broker; the demo's alerting group keeps its state, so a run after another may continue it).
    alerts = [line for line in done.stdout.splitlines() if line.startswith("ALERT")]
    assert any(line.startswith("ALERT portraits  stranger") for line in alerts), done.stdout[-3000:]
    assert not any(line.startswith("ALERT annotated  stranger") for line in alerts)  # crowd rule only there
    # The corridor's player topples and lies on the floor: the pose service and the fall rule say so.
    assert any(line.split()[1:3] == ["corridor", "fall"] for line in alerts), done.stdout[-3000:]
