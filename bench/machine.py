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
    for package in ("facestream", "onnxruntime", "onnxruntime-gpu", "confluent-kafka", "numpy",
                    "opencv-python-headless"):  # fmt: skip
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            continue
    return {
        "host": platform.node(),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "versions": versions,
    }
