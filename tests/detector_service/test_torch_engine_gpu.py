"""MogFace's PyTorch engine against the ONNX Runtime engine on the same file (random weights, a small
input so that the packages build in a minute or two).

These need a CUDA GPU and PyTorch (the ``gpu-torch`` extra); they run on the GPU machine
(bench/README.md says how). On a machine without one there is nothing to run.
"""

import dataclasses
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from facestream.detector_service import models
from facestream.detector_service.inference import torch_engine
from facestream.detector_service.inference.engine import Engine
from facestream.detector_service.inference.engines import onnx_provider, open_engine
from facestream.detector_service.models.mogface_torch import fused_convs  # noqa: F401 (registers the ops)
from facestream.detector_service.models.mogface_torch.net import MogFace
from facestream.detector_service.models.mogface_torch.weights import randomise
from facestream.errors import ModelError
from facestream.tools.export.onnx_export import ExportSpec, export

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

HW = (96, 128)
SEED = 3
FP16_TOLERANCE = 5e-2  # what `facestream export mogface --fp16`'s self-check allows


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, models.FaceModel]:
    model = MogFace("mogface")
    digest = randomise(model, SEED)
    path = tmp_path_factory.mktemp("torch-engine") / "mogface-random.onnx"
    export(model, path, ExportSpec(height=HW[0], width=HW[1], fp16=True), digest, random_weights=True)
    plugin = models.plugin_for(models.read_metadata(path), str(path))
    torch_engine.build_for_file(path, plugin, HW, 2, None, SEED, "quick")
    return path, plugin


@pytest.fixture(scope="module")
def engine(built):
    """One engine for the tests that only run it: each start compiles (from Inductor's caches)."""
    path, plugin = built
    engine = torch_engine.TorchEngine(path, HW, 2, plugin)
    yield engine
    engine.close()


@pytest.fixture(scope="module")
def images() -> np.ndarray:
    return np.random.default_rng(0).integers(0, 256, (2, *HW, 3), dtype=np.uint8)


def test_it_finds_what_onnx_runtime_finds_in_the_same_file(built, engine, images: np.ndarray) -> None:
    path, plugin = built
    reference = Engine(path, HW, 2, plugin, "cuda")
    assert engine.buckets == (1, 2) and engine.provider == "torch"
    assert engine.fallbacks == []  # every bucket replays as a CUDA graph
    for count in (1, 2):  # a full bucket and a padded one
        got, expected = engine.run(images[:count]), reference.run(images[:count])
        assert {name: value.shape for name, value in got.items()} == {n: v.shape for n, v in expected.items()}
        assert got["anchor"].dtype == expected["anchor"].dtype and got["scores"].dtype == np.float32
        # near-equal scores may come in another order: compare them sorted, then the best box of each image
        assert np.abs(np.sort(got["scores"], axis=1) - np.sort(expected["scores"], axis=1)).max() < FP16_TOLERANCE
        faces = plugin.to_detections(got, HW, dataclasses.replace(plugin.default_thresholds, score_threshold=0.0))
        assert len(faces) == count and all(len(image) > 0 for image in faces)
    reference.close()


def test_a_score_floor_brings_only_the_leading_candidates(engine, images: np.ndarray) -> None:
    whole = engine.run(images)
    floor = float(np.median(whole["scores"][:, 0]))
    cut = engine.run(images, floor=floor)
    columns = int((whole["scores"] > floor).sum(axis=1).max())
    assert cut["scores"].shape == (2, max(1, columns))
    for name in ("scores", "deltas", "anchor"):
        np.testing.assert_array_equal(cut[name], whole[name][:, : cut[name].shape[1]])


def test_a_decoded_batch_on_the_gpu_comes_in_through_dlpack(engine, images: np.ndarray) -> None:
    import cupy as cp

    from_host, from_device = engine.run(images), engine.run(cp.asarray(images))
    for name, value in from_host.items():
        np.testing.assert_array_equal(from_device[name], value)


def test_a_bucket_not_built_falls_back_to_onnx_runtime_and_says_how_to_build_it(built) -> None:
    path, plugin = built
    engine = open_engine(path, HW, 4, plugin, "torch,cuda")  # built for batches up to 2 only
    assert engine.provider == "cuda" and onnx_provider(engine) == "cuda"
    assert engine.fallbacks[0].startswith("torch: no torch engine is built") and "build-engine" in engine.fallbacks[0]
    engine.close()
    with pytest.raises(ModelError, match="no torch engine is built"):
        open_engine(path, HW, 4, plugin, "torch")


@pytest.mark.parametrize("stride, dilation", [(1, 1), (2, 1), (1, 2)])
def test_cudnn_fused_convolutions_give_the_plain_numbers(stride: int, dilation: int) -> None:
    generator = torch.Generator(device="cuda").manual_seed(5)

    def tensor(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, device="cuda", generator=generator).half()

    x = tensor(2, 64, 30, 40).to(memory_format=torch.channels_last)
    weight, bias = (tensor(128, 64, 3, 3) * 0.05).to(memory_format=torch.channels_last), tensor(128)
    plain = F.conv2d(x, weight, bias, stride, dilation, dilation)
    residual = tensor(*plain.shape).to(memory_format=torch.channels_last)
    args = ([stride] * 2, [dilation] * 2, [dilation] * 2)
    got = torch.ops.facestream.conv_relu(x, weight, bias, None, *args)
    got_add = torch.ops.facestream.conv_relu(x, weight, bias, residual, *args)
    assert got.is_contiguous(memory_format=torch.channels_last)
    torch.testing.assert_close(got, F.relu(plain), atol=2e-2, rtol=1e-2)
    torch.testing.assert_close(got_add, F.relu(plain + residual), atol=2e-2, rtol=1e-2)


def test_weights_other_than_the_files_are_refused(built) -> None:
    path, plugin = built
    with pytest.raises(ModelError, match="not what mogface-random.onnx was exported from"):
        torch_engine.build_for_file(path, plugin, HW, 4, None, SEED + 1, "quick")


def test_build_engine_then_detect_runs_on_torch(built) -> None:
    """What a user runs: the command finds every bucket built, loads them and warms the detector."""
    path, _ = built
    command = [sys.executable, "-m", "facestream", "models", "build-engine", "--model", str(path)]
    command += ["--provider", "torch,cuda", "--batch", "2", "--random-seed", str(SEED), "--allow-random-weights"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "built already" in done.stdout
    assert "on torch" in done.stdout and "buckets [1, 2] ready" in done.stdout
