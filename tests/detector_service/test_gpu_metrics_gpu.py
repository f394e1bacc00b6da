"""The GPU's gauges read from a real card through NVML (on the GPU machine, with the ``gpu`` extra's
nvidia-ml-py; bench/README.md says how to carry it)."""

import os

import pytest
from prometheus_client import CollectorRegistry, generate_latest

from facestream.detector_service import gpu_metrics

pytest.importorskip("pynvml", reason="needs nvidia-ml-py and a GPU (the gpu extra)")


def test_the_card_s_memory_and_utilisation_are_in_metrics() -> None:
    collector = gpu_metrics.gpu_collector("cuda", os.environ)
    assert collector is not None
    registry = CollectorRegistry()
    registry.register(collector)
    text = generate_latest(registry).decode()
    values = {
        line.split("{")[0]: float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if not line.startswith("#")
    }
    assert values["facestream_gpu_memory_total_bytes"] > 8e9, text  # a data-centre card
    assert 0 < values["facestream_gpu_memory_used_bytes"] <= values["facestream_gpu_memory_total_bytes"], text
    assert 0 <= values["facestream_gpu_utilization_ratio"] <= 1, text
    assert 'name="NVIDIA' in text, text
