"""The tiers of the suite: a test starts only the real programs its markers declare, and the script
that installs the tests' system packages looks for every GStreamer element the cameras use."""

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.programs import Guard, declared_by
from helpers.turns import Held, TurnTimeout, turn

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("command", "marker"),
    [
        (["podman", "ps"], "compose"),
        ([sys.executable, "-m", "podman_compose", "-f", "x.yml", "config"], "compose"),
        (["/usr/bin/chromedriver", "--port=1"], "browser"),
        (["/usr/lib/postgresql/15/bin/pg_ctl", "start"], "postgres"),
        (["/usr/bin/python3", str(ROOT / "bench" / "rtsp_camera.py"), "--port", "1"], "rtsp"),
        (["java", "-cp", "lib/*", "kafka.Kafka"], "kafka"),
        ([sys.executable, "-m", "facestream", "kafka", "start"], "kafka"),
        ([sys.executable, "-u", "-m", "facestream", "detect", "--model", "yunet"], "kafka"),
        (["mosquitto", "-p", "1883"], "e2e"),
        (["/usr/sbin/nginx", "-p", "/tmp/x"], "e2e"),
        ([".venv/bin/helm", "template", "fs", "deploy/helm/facestream"], "helm"),
        (["/usr/bin/promtool", "test", "rules", "x.test.yml"], "prometheus"),
        ([sys.executable, "-m", "facestream", "detect", "--help"], "kafka"),
        ([sys.executable, "-m", "facestream", "models", "fetch"], None),
        ([sys.executable, "-c", "print(1)"], None),
        (["git", "ls-files"], None),
    ],
)
def test_each_server_program_names_the_marker_that_declares_it(command: list[str], marker: str | None) -> None:
    assert declared_by(command)[1] == marker


def test_a_test_without_markers_may_not_start_a_server_and_is_told_which_marker_it_lacks() -> None:
    guard = Guard({"compose", "kafka"})
    guard.enter("tests/x.py::test_y", set())
    with pytest.raises(RuntimeError, match=r"test_y starts 'podman' .* not marked 'compose'"):
        guard("subprocess.Popen", ("podman", ["podman", "ps"], None, None))
    guard("subprocess.Popen", ("git", ["git", "status"], None, None))  # anyone may
    guard.enter("tests/x.py::test_z", {"compose"})
    guard("subprocess.Popen", ("podman", ["podman", "ps"], None, None))  # declared
    guard.leave()
    guard("subprocess.Popen", ("podman", "podman ps", None, None))  # between tests: not held


def launch_lines(source: str) -> list[str]:
    """The pipeline descriptions given to GStreamer's ``parse_launch``/``set_launch`` in ``source``,
    formatted values left out."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") in ("parse_launch", "set_launch"):
            parts = [
                n.value for n in ast.walk(node.args[0]) if isinstance(n, ast.Constant) and isinstance(n.value, str)
            ]
            lines.append("".join(parts))
    return lines


def test_the_system_packages_script_looks_for_every_element_of_the_cameras_pipelines() -> None:
    lines = launch_lines((ROOT / "bench" / "rtsp_camera.py").read_text())
    segments = [segment.strip(" ()") for line in lines for segment in line.split("!")]
    elements = {segment.split()[0] for segment in segments if segment and "/" not in segment.split()[0]}
    script = (ROOT / "tests" / "system-packages.sh").read_text()
    listed = set(re.findall(r"^([a-z0-9_]+) \S+$", script.split('ELEMENTS="', 1)[1].split('"', 1)[0], re.M))
    assert {"filesrc", "decodebin", "appsink", "appsrc", "x264enc", "rtph264pay"} <= elements, elements
    assert elements <= listed, f"tests/system-packages.sh does not look for {sorted(elements - listed)}"
    assert "avdec_msmpeg4" in listed  # the decoder decodebin picks for vtest.avi (DivX 3)


def test_a_turn_not_had_in_time_says_which_alone_test_held_the_machine(tmp_path: Path) -> None:
    with turn(tmp_path, alone=True, nodeid="tests/e2e/test_cluster.py::test_big"):
        with pytest.raises(TurnTimeout, match=r"after 0 s waiting for the gate .* tests/e2e/test_cluster.py::test_big"):
            with turn(tmp_path, alone=False, nodeid="tests/x.py::test_small", wait_s=0.3):
                pass
    with turn(tmp_path, alone=False, nodeid="tests/x.py::test_small", wait_s=0.3):
        with turn(tmp_path, alone=False, nodeid="tests/x.py::test_other", wait_s=0.3):
            pass  # tests beside each other share the machine


def test_a_turn_held_across_an_alone_files_tests_lets_nothing_in_until_released(tmp_path: Path) -> None:
    held = Held()
    held.take(tmp_path, alone=True, nodeid="tests/deploy/test_network_faults.py::test_first")
    held.take(tmp_path, alone=True, nodeid="tests/deploy/test_network_faults.py::test_second")  # kept, not taken
    with pytest.raises(TurnTimeout, match="test_network_faults.py::test_first"):
        with turn(tmp_path, alone=False, nodeid="tests/x.py::test_small", wait_s=0.3):
            pass
    held.release()
    with turn(tmp_path, alone=False, nodeid="tests/x.py::test_small", wait_s=0.3):
        pass


def test_an_alone_test_waiting_goes_before_the_tests_that_share_the_machine(tmp_path: Path) -> None:
    waiter = subprocess.Popen(["sleep", "30"])  # a worker whose alone test waits for the gate
    try:
        (tmp_path / f"alone-waiting-{waiter.pid}").touch()
        with pytest.raises(TurnTimeout, match="alone tests still waiting"):
            with turn(tmp_path, alone=False, nodeid="tests/x.py::test_small", wait_s=0.3):
                pass
    finally:
        waiter.kill()
        waiter.wait()
    with turn(tmp_path, alone=False, nodeid="tests/x.py::test_small", wait_s=0.3):
        pass  # a worker that died waiting holds nobody up
