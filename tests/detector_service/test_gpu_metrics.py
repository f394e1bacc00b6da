"""Which replicas export the GPU's gauges: those that infer on a GPU, and only where NVML answers
(test_gpu_metrics_gpu.py reads a real card on the GPU machine)."""

import logging

import pytest

from facestream.detector_service import gpu_metrics


def test_a_replica_on_the_cpu_has_no_gpu_series() -> None:
    assert gpu_metrics.gpu_collector("cpu") is None


def test_the_card_is_the_first_cuda_lets_the_process_use() -> None:
    assert gpu_metrics.visible_gpu({}) == "0"
    assert gpu_metrics.visible_gpu({"CUDA_VISIBLE_DEVICES": "3,1"}) == "3"
    assert gpu_metrics.visible_gpu({"CUDA_VISIBLE_DEVICES": " GPU-8c1e "}) == "GPU-8c1e"


@pytest.mark.parametrize("provider", ["cuda", "tensorrt", "torch"])
def test_a_gpu_replica_without_nvml_says_so_and_serves_on(provider: str, caplog) -> None:
    """This machine has no NVIDIA driver (and the CPU install no nvidia-ml-py): no series, one warning."""
    with caplog.at_level(logging.WARNING, logger=gpu_metrics.__name__):
        assert gpu_metrics.gpu_collector(provider) is None
    assert [r.getMessage() for r in caplog.records if r.getMessage().startswith("no GPU metrics")], caplog.text
