import logging
from pathlib import Path

import pytest

from detector_service import models
from detector_service.runtime import open_session
from facestream.errors import ModelError


def test_auto_says_loudly_what_it_fell_back_from(yunet_path: Path, caplog) -> None:
    import onnxruntime as ort

    caplog.set_level(logging.INFO, logger="detector_service.runtime")
    runtime = open_session(yunet_path, "auto", threads=1)
    if "CUDAExecutionProvider" in ort.get_available_providers():
        pytest.skip("this machine has a GPU build: the CPU fallback cannot happen here")
    assert runtime.provider == "cpu"
    assert any("tensorrt" in r for r in runtime.fallbacks) and any("cuda" in r for r in runtime.fallbacks)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("FALLBACK: inference runs on CPU" in w for w in warnings)


def test_a_named_provider_never_falls_back(yunet_path: Path) -> None:
    import onnxruntime as ort

    if "CUDAExecutionProvider" in ort.get_available_providers():
        pytest.skip("this machine has CUDA: asking for it cannot fail here")
    with pytest.raises(ModelError, match="'cuda' is not available"):
        open_session(yunet_path, "cuda")


def test_cpu_by_name_reports_no_fallback(yunet_path: Path) -> None:
    runtime = open_session(yunet_path, "cpu", threads=1)
    assert runtime.provider == "cpu" and runtime.fallbacks == []


def test_unusable_files_are_model_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    with pytest.raises(ModelError, match="cannot load"):
        open_session(bad, "cpu")
    with pytest.raises(ModelError, match="neither a known model"):
        models.resolve(str(tmp_path / "missing.onnx"))
    with pytest.raises(ModelError, match="no 'facestream.model' metadata"):
        models.plugin_for({}, "plain.onnx")
    with pytest.raises(ModelError, match="'retinaface' model"):
        models.plugin_for({"facestream.model": "retinaface"}, "other.onnx")
