"""--device N narrows CUDA_VISIBLE_DEVICES to one GPU, counting among those already visible."""

import pytest

from facestream.detector_service.inference.gpu_choice import use_gpu
from facestream.errors import ConfigError


def test_without_a_list_the_number_is_the_gpu() -> None:
    env: dict[str, str] = {}
    assert use_gpu(1, env) == "1" and env["CUDA_VISIBLE_DEVICES"] == "1"


def test_the_number_counts_among_the_gpus_already_visible() -> None:
    env = {"CUDA_VISIBLE_DEVICES": "2, 3,GPU-8a1f"}
    assert use_gpu(2, env) == "GPU-8a1f" and env["CUDA_VISIBLE_DEVICES"] == "GPU-8a1f"


def test_a_gpu_past_the_visible_ones_is_refused_with_the_count() -> None:
    with pytest.raises(ConfigError, match="leaves 2 GPU"):
        use_gpu(2, {"CUDA_VISIBLE_DEVICES": "0,1"})
