"""What the wheel installs: one top-level name, ``facestream``, with the services below it, and no
benchmarks (they stay in the checkout)."""

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_wheel_installs_one_name_and_no_benchmarks(tmp_path: Path) -> None:
    # Built from a copy: setuptools leaves build/ and egg-info folders beside the sources it builds.
    source = tmp_path / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".*", "build", "*.egg-info", "__pycache__"))
    cmd = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(tmp_path), "."]
    subprocess.run(cmd, cwd=source, check=True, capture_output=True)
    (wheel,) = tmp_path.glob("facestream-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert {n.split("/")[0] for n in names} == {"facestream", wheel.name.split("-py3")[0] + ".dist-info"}
    for member in (
        "facestream/schemas/frame.py",
        "facestream/producers/streamer.py",
        "facestream/detector_service/models/yunet.py",
        "facestream/tools/cli.py",
        "facestream/tools/export/onnx_export.py",
        "facestream/detector_service/models/mogface_torch/net.py",
        "facestream/broker/pom.xml",
        "facestream/broker/log4j2.xml",
        "facestream/detector_service/decoding/native/batch_decode.c",
    ):
        assert member in names, member
    assert not [n for n in names if "bench" in n.split("/")]
    entry_points = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    assert "facestream = facestream.tools.cli:main" in entry_points


# A machine with the broker's and the detector's packages only (the GPU host of bench/README.md): the
# database layer's packages are absent there, and these commands must not need them.
WITHOUT_DATABASE = """
import sys

class Absent:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("sqlalchemy", "alembic", "psycopg"):
            raise ModuleNotFoundError(f"No module named {name!r}")

sys.meta_path.insert(0, Absent())
from click.testing import CliRunner
from facestream.tools.cli import cli

for args in (["kafka", "--help"], ["kafka", "acls", "--help"], ["detect", "--help"]):
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, (args, result.output, result.exception)
"""


def test_the_kafka_and_detect_commands_run_without_the_database_packages() -> None:
    done = subprocess.run([sys.executable, "-c", WITHOUT_DATABASE], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
