"""``--provider`` as a chain, and the PyTorch engine's fallback to ONNX Runtime. On this CPU-only
machine the torch engine can never start, which is exactly the fallback that must be loud."""

import logging
from pathlib import Path

import numpy as np
import pytest

from facestream.detector_service.config import DetectorConfig
from facestream.detector_service.inference import runtime
from facestream.detector_service.inference.engines import onnx_provider, open_engine
from facestream.detector_service.models.yunet import YuNet
from facestream.errors import ConfigError, ModelError
from facestream.schemas import ModelRef

PLUGIN = YuNet(ModelRef("yunet", "2023mar", "test"), {})


@pytest.mark.parametrize(
    ("spec", "chain"),
    [("auto", "auto"), ("cpu", "cpu"), ("torch,cuda,cpu", "torch,cuda,cpu"), (" cuda , cpu ", "cuda,cpu")],
)
def test_a_chain_is_read_in_order(spec: str, chain: str) -> None:
    assert runtime.parse_chain(spec) == chain
    assert DetectorConfig(provider=spec).provider == chain  # as build-engine and open_engine split it


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("gpu", "some of torch, tensorrt, cuda, cpu"),
        ("cuda,cuda", "each once"),
        ("auto,cpu", "give auto, or"),
        ("", "give auto, or"),
        ("cuda,torch", "can only come first"),
    ],
)
def test_a_wrong_chain_is_refused_with_what_is_allowed(spec: str, says: str) -> None:
    with pytest.raises(ConfigError, match=f"--provider: .*{says}"):
        DetectorConfig(provider=spec)
    with pytest.raises(ValueError, match=says):
        runtime.parse_chain(spec)


def test_the_torch_engine_falls_back_to_onnx_runtime_loudly(yunet_path: Path, caplog) -> None:
    caplog.set_level(logging.WARNING)
    engine = open_engine(yunet_path, (96, 128), 2, PLUGIN, "torch,cpu", threads=1)
    assert engine.provider == "cpu" and engine.fallbacks[0].startswith("torch: ")
    assert any("FALLBACK: the torch engine cannot start" in r.getMessage() for r in caplog.records)
    assert engine.run(np.zeros((2, 96, 128, 3), np.uint8))["scores"].shape[0] == 2
    assert onnx_provider(engine) == "cpu"


def test_torch_alone_has_nothing_to_fall_back_to(yunet_path: Path) -> None:
    with pytest.raises(ModelError):
        open_engine(yunet_path, (96, 128), 2, PLUGIN, "torch")


def test_a_chain_of_onnx_runtime_providers_falls_back_along_it(yunet_path: Path) -> None:
    engine = open_engine(yunet_path, (96, 128), 2, PLUGIN, "tensorrt, cpu", threads=1)  # as an env var may say
    assert engine.provider in ("cpu", "tensorrt", "cuda")
    if engine.provider == "cpu":  # this machine: the first of the chain is missing and said so
        assert any(reason.startswith("tensorrt: ") for reason in engine.fallbacks)
