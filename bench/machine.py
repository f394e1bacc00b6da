"""What a benchmark ran on, recorded with every result: numbers from different machines never mix."""

import os
import platform
import sys
from importlib import metadata
from pathlib import Path

# The cores this run may use, read when the benchmark starts (taskset narrows them), before e2e pins
# its own threads to the cores it leaves the broker and detectors.
CORES_AT_START = len(os.sched_getaffinity(0))


def describe() -> dict:
    cpu = platform.processor() or "unknown"
    try:
        with open("/proc/cpuinfo") as handle:
            cpu = next(line.split(":", 1)[1].strip() for line in handle if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    versions = {}
    for package in ("facestream", "confluent-kafka", "opencv-python-headless"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            continue
    # The modules actually imported (a carried onnxruntime-gpu may shadow an installed CPU build);
    # torch only if the benchmark used it.
    import numpy
    import onnxruntime

    versions.update(onnxruntime=onnxruntime.__version__, numpy=numpy.__version__)
    if "torch" in sys.modules:
        versions["torch"] = sys.modules["torch"].__version__
    found = {
        "commit": _commit(),
        "source_sha256": source_digest(),
        "host": platform.node(),
        "cpu": cpu,
        "cores": CORES_AT_START,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "versions": versions,
    }
    if (cores := os.cpu_count()) != found["cores"]:
        found["cores_on_host"] = cores
    if gpu := _gpu():
        found["gpu"] = gpu
    return found


def _gpu() -> str | None:
    """Name, driver and memory of the GPUs this run may use (``CUDA_VISIBLE_DEVICES``, which nvidia-smi
    itself ignores), e.g. ``2 x NVIDIA H200, ...``; None on a machine without one."""
    import subprocess

    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "").strip()
    try:
        done = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"]
            + (["-i", visible] if visible else []),
            capture_output=True,
            text=True,
            timeout=10,
        )
    except OSError:
        return None
    lines = done.stdout.strip().splitlines()
    if not lines:
        return None
    if len(set(lines)) > 1:
        return "; ".join(lines)
    return lines[0] if len(lines) == 1 else f"{len(lines)} x {lines[0]}"


def _commit() -> str:
    """The git commit the benchmark ran (numbers belong to the code that made them); a copy without
    git metadata (the GPU machine's) says it in ``FACESTREAM_COMMIT``, which bench/gpu_env.sh sets from
    the ``.fshome/commit`` file written before the carry."""
    import subprocess

    if os.environ.get("FACESTREAM_COMMIT"):
        return os.environ["FACESTREAM_COMMIT"]
    try:
        done = subprocess.run(
            ["git", "describe", "--always", "--dirty"],
            capture_output=True,
            text=True,
            timeout=5,
            cwd=os.path.dirname(os.path.abspath(__file__)),
        )
    except OSError:
        return "unknown"
    return done.stdout.strip() or "unknown"


def source_digest() -> str:
    """sha256 over the project's Python sources, path and content: identifies the code that ran even
    where the checkout's git metadata is stale or missing (a copied working tree on the GPU machine)."""
    import hashlib
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for package in ("bench", "detector_service", "facestream", "producers", "schemas"):
        for path in sorted((root / package).rglob("*.py")):
            digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def cpu_seconds(pid: int) -> tuple[float, float, float, float]:
    """(user, system, waited-for children's user, their system) CPU seconds of a live process."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return tuple(int(v) / tick for v in fields[11:15])  # type: ignore[return-value]
