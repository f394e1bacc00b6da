"""Type-check the package, and the benchmarks beside it, with mypy as the wheel lays the package out.

The repository keeps its packages at the top (schemas/, detector_service/, ...) and pyproject.toml's
package-dir installs them under the one name ``facestream``; an editable install finds them through an
import hook mypy cannot follow. So this builds that layout from links in ``.mypy-tree/`` and checks
``facestream`` there, with the settings in pyproject.toml's ``[tool.mypy]``. Run by ``make lint``.
"""

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TREE = ROOT / ".mypy-tree"


def build_tree() -> None:
    """``.mypy-tree/facestream/<part>`` links to each folder package-dir names (``facestream`` itself
    gets a folder of links, since its parts live beside it)."""
    package_dir = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    shutil.rmtree(TREE, ignore_errors=True)
    top = TREE / "facestream"
    top.mkdir(parents=True)
    for entry in (ROOT / package_dir["facestream"]).iterdir():
        (top / entry.name).symlink_to(entry)
    for name, folder in package_dir.items():
        if name != "facestream":
            (top / name.removeprefix("facestream.")).symlink_to(ROOT / folder)
    (TREE / "bench").symlink_to(ROOT / "bench")  # run from a checkout, not installed; checked all the same


def main() -> int:
    build_tree()
    config = ROOT / "pyproject.toml"
    command = [
        sys.executable,
        "-m",
        "mypy",
        "--config-file",
        str(config),
        "-p",
        "facestream",
        "-p",
        "bench",
        *sys.argv[1:],
    ]
    return subprocess.call(command, cwd=TREE)


if __name__ == "__main__":
    sys.exit(main())
