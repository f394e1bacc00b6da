"""The edge producer's install, as a user on a small machine gets it: `pip install facestream` from
this checkout into a fresh virtual environment (pip's cache serves the packages), then the producer
streams the sample photos through the real broker, and each service's command says in one line which
extra it lacks. `python -m bench install` weighs the same environment beside `[all]`."""

import os
import subprocess
from pathlib import Path

import pytest

from bench.install import make_venv
from facestream import kafka_reading
from facestream.schemas import unpack_frame

pytestmark = pytest.mark.kafka  # services' commands, and pip (which fetches what its cache lacks)


@pytest.fixture(scope="module")
def edge(tmp_path_factory) -> Path:
    """The light environment's ``bin``, and no module of the extras in it."""
    bin_dir = make_venv(tmp_path_factory.mktemp("edge") / "venv")
    heavy = ("onnxruntime", "onnx", "cv2", "sqlalchemy", "alembic", "apprise", "orjson", "usearch", "argon2")
    probe = f"import importlib.util as u; print([m for m in {heavy!r} if u.find_spec(m)])"
    assert subprocess.run([bin_dir / "python", "-c", probe], capture_output=True, text=True).stdout.strip() == "[]"
    return bin_dir


def facestream(edge: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [edge / "facestream", *args], capture_output=True, text=True, timeout=120, env={**os.environ, **(env or {})}
    )


def test_the_light_install_produces_frames_through_the_broker(
    edge: Path, bootstrap: str, topics: dict, sample_dir: Path
) -> None:
    done = facestream(
        edge,
        "produce",
        "--camera", "edge",
        "--source", str(sample_dir / "portraits"),
        "--fps", "0",
        "--loop",
        "--start-seq", "0",
        "--max-frames", "6",
        "--frame-size", "640x480",
        "--frames-topic", topics["frames"],
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    frames = [unpack_frame(record.value()) for record in kafka_reading.read_to_end(topics["frames"], bootstrap)]
    assert [(f.camera_id, f.frame_seq, f.width, f.height) for f in frames] == [("edge", i, 640, 480) for i in range(6)]
    assert all(f.data[:2] == b"\xff\xd8" for f in frames)  # JPEGs


@pytest.mark.parametrize(
    ("command", "extra"),
    [
        (["detect", "--model", "yunet"], "detector"),
        (["pose"], "detector"),
        (["models", "fetch"], "detector"),
        (["alerting"], "alerting"),
        (["alert-store"], "store"),
        (["users", "list"], "store"),
        (["notify"], "notify"),
        (["dashboard"], "dashboard"),
    ],
    ids=lambda value: value if isinstance(value, str) else " ".join(value),
)
def test_a_service_without_its_extra_says_which_to_install(edge: Path, command: list[str], extra: str) -> None:
    done = facestream(edge, *command, env={"FACESTREAM_HOME": str(edge.parent / "home")})
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and f"pip install 'facestream[{extra}]'" in lines[0], done.stderr


def test_the_light_install_lists_every_command(edge: Path) -> None:
    done = facestream(edge, "--help")
    assert done.returncode == 0, done.stderr
    assert "produce" in done.stdout and "not installed: pip install 'facestream[store]'" in done.stdout
