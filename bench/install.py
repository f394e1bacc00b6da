"""How much an install weighs: ``pip install facestream`` (an edge producer: the producer and the
``kafka`` and ``samples`` commands) beside ``pip install 'facestream[all]'`` (every service), each in
a fresh virtual environment built from this checkout, and the producer's image beside the services'
where podman has built them (``podman-compose build``, as the compose tests do).

Sizes are bytes on disk: the whole environment (with the pip and setuptools ``venv`` puts in every
one) and its installed packages alone (site-packages without those two). tests/facestream/
test_light_install.py uses the light environment as an edge user would.
"""

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bench import save, settings_of
from bench.figures import Target, newest, source
from bench.machine import describe
from bench.settings import InstallBenchConfig

ROOT = Path(__file__).resolve().parents[1]
VENV_OWN = {"pip", "setuptools", "_distutils_hack", "pkg_resources", "distutils-precedence.pth"}
IMAGES = {
    "producer": "localhost/facestream-producer:0.1.0",
    "full": "localhost/facestream:0.1.0",
    "base": "docker.io/library/python:3.11-slim",  # what both stand on
}


def make_venv(folder: Path, extras: str = "") -> Path:
    """A fresh virtual environment at ``folder`` with this checkout installed (``[extras]`` if any);
    its ``bin``. pip's cache serves what an earlier install fetched."""
    subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
    target = f"{ROOT}[{extras}]" if extras else str(ROOT)
    subprocess.run(
        [str(folder / "bin" / "pip"), "install", "-q", "--disable-pip-version-check", target],
        check=True,
        timeout=1800,
    )
    return folder / "bin"


def _bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())


def weigh(folder: Path) -> dict:
    """The environment's bytes, its packages' bytes (site-packages less pip and setuptools), and the
    distributions installed."""
    site = next(folder.glob("lib/python3*/site-packages"))
    packages = sum(_bytes(p) if p.is_dir() else p.stat().st_size for p in site.iterdir() if _own(p.name) is None)
    freeze = subprocess.run(
        [str(folder / "bin" / "pip"), "freeze", "--exclude-editable", "--disable-pip-version-check"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    others = [line for line in freeze if not line.startswith("facestream")]  # the project is named by the commit
    return {"venv_bytes": _bytes(folder), "packages_bytes": packages, "distributions": others}


def _own(name: str) -> str | None:
    """The venv's own tool a site-packages entry belongs to, if any."""
    stem = name.split("-")[0]
    return stem if stem in VENV_OWN or name in VENV_OWN else None


def image_bytes(name: str) -> int | None:
    """An image's size as podman reports it, or None when it is not built here."""
    if shutil.which("podman") is None:
        return None
    done = subprocess.run(["podman", "image", "inspect", "--format", "{{.Size}}", name], capture_output=True, text=True)
    return int(done.stdout.strip()) if done.returncode == 0 else None


def run(cfg: InstallBenchConfig, command: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="facestream-install-") as tmp:
        installs = {}
        for name, extras in (("producer", ""), ("full", cfg.extras)):
            print(f"installing {name} (pip install {'facestream' if not extras else f'facestream[{extras}]'}) ...")
            make_venv(Path(tmp) / name, extras)
            installs[name] = weigh(Path(tmp) / name)
            weighed = installs[name]
            print(f"  {weighed['venv_bytes'] / 1e6:.0f} MB ({weighed['packages_bytes'] / 1e6:.0f} MB of packages)")
    producer, full = installs["producer"], installs["full"]
    result = {
        "benchmark": "install",
        "command": command,
        "machine": describe(),
        "settings": settings_of(cfg),
        "installs": installs,
        "venv_ratio": round(producer["venv_bytes"] / full["venv_bytes"], 3),
        "packages_ratio": round(producer["packages_bytes"] / full["packages_bytes"], 3),
    }
    if not cfg.no_images:
        sizes = {name: image_bytes(image) for name, image in IMAGES.items()}
        result["images"] = {"names": IMAGES, "bytes": sizes}
        producer_image, full_image = sizes["producer"], sizes["full"]
        if producer_image and full_image:
            result["image_ratio"] = round(producer_image / full_image, 3)
    save(result, cfg.out)
    print(
        f"producer / full: environment {result['venv_ratio']:.2f}, packages {result['packages_ratio']:.2f}"
        + (f", image {result['image_ratio']:.2f}" if "image_ratio" in result else "")
        + f" -> {cfg.out}"
    )
    return result


def _mb(value: int | None) -> str:
    return "-" if value is None else f"{value / 1e6:.0f} MB"


def render(result: dict) -> list[str]:
    installs, images = result["installs"], result.get("images", {}).get("bytes", {})
    producer, full = installs["producer"], installs["full"]
    return [
        f"**Install sizes, the edge producer's beside every service's** (`{result['command']}`; each in a fresh "
        f"virtual environment from the checkout; images as `podman-compose build` makes them, both on a base "
        f"of {_mb(images.get('base'))}):",
        "",
        "| install | environment | its packages (less pip and setuptools) | image |",
        "|---|---|---|---|",
        f"| `pip install facestream` (producer, `kafka`, `samples`) | {_mb(producer['venv_bytes'])} "
        f"| {_mb(producer['packages_bytes'])} | {_mb(images.get('producer'))} |",
        f"| `pip install 'facestream[{result['settings']['extras']}]'` (every service) | {_mb(full['venv_bytes'])} "
        f"| {_mb(full['packages_bytes'])} | {_mb(images.get('full'))} |",
        f"| producer / full | {result['venv_ratio']:.2f} | {result['packages_ratio']:.2f} "
        f"| {result['image_ratio']:.2f} |"
        if "image_ratio" in result
        else "",
        "",
        source(result),
    ]


def targets(results: dict[str, dict]) -> list[Target]:
    """The producer's install and image at most a third of the full ones."""
    run = newest(results, "install")
    if run is None:
        return [Target("Producer install <= 1/3 of [all], venv and image", None, None, None)]
    venv, image = run["venv_ratio"], run.get("image_ratio")
    measured = f"environment {venv:.2f}, packages {run['packages_ratio']:.2f}, image " + (
        "not built" if image is None else f"{image:.2f}"
    )
    met = venv <= 1 / 3 and image is not None and image <= 1 / 3
    short = f"{venv:.2f}, image {'-' if image is None else f'{image:.2f}'}"
    return [Target("Producer install <= 1/3 of [all], venv and image", measured, met, run["_file"], short)]
