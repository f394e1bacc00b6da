"""What a benchmark ran on, recorded with every result: numbers from different machines never mix."""

import os
import platform
import sys
from importlib import metadata


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
    return {
        "commit": _commit(),
        "host": platform.node(),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "versions": versions,
    }


def _commit() -> str:
    """The git commit the benchmark ran (numbers belong to the code that made them)."""
    import subprocess

    try:
        done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=5,
                              cwd=os.path.dirname(os.path.abspath(__file__)))  # fmt: skip
    except OSError:
        return "unknown"
    return done.stdout.strip() or "unknown"
