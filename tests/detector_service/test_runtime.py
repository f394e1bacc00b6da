"""Provider choice and options. On this CPU-only machine the GPU providers are absent, which is
exactly the fallback that must be loud; their options are checked as the dictionaries ORT gets."""

import logging
from pathlib import Path

import numpy as np
import pytest

from facestream.detector_service import models
from facestream.detector_service.inference import runtime
from facestream.detector_service.inference.engine import Engine, bucket_of, buckets_for
from facestream.detector_service.inference.runtime import SessionPlan
from facestream.detector_service.models.yunet import YuNet
from facestream.errors import ModelError
from facestream.schemas import ModelRef

PLUGIN = YuNet(ModelRef("yunet", "2023mar", "test"), {})


def gpu_build() -> bool:
    import onnxruntime as ort

    return "CUDAExecutionProvider" in ort.get_available_providers()


@pytest.mark.skipif(gpu_build(), reason="a GPU build of onnxruntime cannot fall back to the CPU here")
def test_auto_warns_what_it_fell_back_from(yunet_path: Path, caplog) -> None:
    caplog.set_level(logging.INFO, logger="facestream.detector_service.inference.runtime")
    engine = Engine(yunet_path, (480, 640), batch=4, plugin=PLUGIN, provider="auto", threads=1)
    assert engine.provider == "cpu" and engine.buckets == (4,)
    assert any("tensorrt" in r for r in engine.fallbacks) and any("cuda" in r for r in engine.fallbacks)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("FALLBACK: inference runs on CPU" in w for w in warnings)


@pytest.mark.skipif(gpu_build(), reason="a GPU build of onnxruntime has CUDA: asking for it cannot fail")
def test_a_named_provider_never_falls_back(yunet_path: Path) -> None:
    with pytest.raises(ModelError, match="'cuda' is not available"):
        Engine(yunet_path, (480, 640), batch=4, plugin=PLUGIN, provider="cuda")


def test_cpu_by_name_reports_no_fallback_and_runs_any_batch(yunet_path: Path) -> None:
    engine = Engine(yunet_path, (96, 128), batch=8, plugin=PLUGIN, provider="cpu", threads=1)
    assert engine.provider == "cpu" and engine.fallbacks == []
    for n in (1, 3, 8):
        outputs = engine.run(np.zeros((n, 96, 128, 3), np.uint8))
        assert outputs["scores"].shape == (n, 12 * 16 + 6 * 8 + 3 * 4)  # every anchor: fewer than top-k


def test_tensorrt_options_are_what_its_users_expect(tmp_path: Path) -> None:
    shapes = ((1, 3, 480, 640), (4, 3, 480, 640))
    plan = SessionPlan(input_name="input", input_shape=shapes[1], profiles=shapes, cache_dir=tmp_path)
    options = runtime.provider_options("tensorrt", plan)
    assert options["trt_fp16_enable"] == "1"
    assert options["trt_engine_cache_enable"] == "1" and options["trt_engine_cache_path"] == str(tmp_path)
    assert options["trt_timing_cache_enable"] == "1" and options["trt_timing_cache_path"] == str(tmp_path)
    for key in ("min", "opt", "max"):  # one exact profile per bucket
        assert options[f"trt_profile_{key}_shapes"] == "input:1x3x480x640,input:4x3x480x640"


def test_cuda_options() -> None:
    options = runtime.provider_options(
        "cuda", SessionPlan(input_name="input", input_shape=(8, 3, 64, 64), cuda_graph=True)
    )
    assert options["prefer_nhwc"] == "1" and options["enable_cuda_graph"] == "1"
    assert options["cudnn_conv_algo_search"] == "EXHAUSTIVE"


def test_cuda_options_given_override_the_defaults() -> None:
    plan = SessionPlan(
        input_name="input",
        input_shape=(8, 3, 64, 64),
        cuda_options=(("cudnn_conv_algo_search", "HEURISTIC"), ("use_tf32", "0")),
    )
    options = runtime.provider_options("cuda", plan)
    assert options["cudnn_conv_algo_search"] == "HEURISTIC" and options["use_tf32"] == "0"
    assert options["prefer_nhwc"] == "1"  # the rest stay as they were


def test_engine_cache_is_keyed_by_model_gpu_and_versions(yunet_path: Path) -> None:
    key = runtime.engine_cache_dir(yunet_path)
    assert key.parts[-3].startswith("yunet-2023mar-dynamic-") and key.parts[-1].startswith("ort-")


def test_buckets() -> None:
    assert buckets_for(16) == (1, 4, 8, 16)
    assert buckets_for(12) == (1, 4, 8, 12)
    assert buckets_for(1) == (1,)
    assert [bucket_of(n, (1, 4, 8, 16)) for n in (1, 2, 4, 5, 16)] == [1, 4, 4, 8, 16]


def test_unusable_files_are_model_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    with pytest.raises(ModelError, match="cannot load"):
        Engine(bad, (96, 128), batch=1, plugin=PLUGIN, provider="cpu")
    with pytest.raises(ModelError, match="not a readable ONNX file"):
        models.read_metadata(bad)
    with pytest.raises(ModelError, match="neither a known model"):
        models.resolve(str(tmp_path / "missing.onnx"))
    with pytest.raises(ModelError, match="no 'facestream.model' metadata"):
        models.plugin_for({}, "plain.onnx")
    with pytest.raises(ModelError, match="'retinaface' model"):
        models.plugin_for({"facestream.model": "retinaface"}, "other.onnx")


def test_the_engine_cache_asks_for_the_name_of_the_gpu_the_process_runs_on() -> None:
    # It asked for the first GPU's name whatever --device had set, so a mixed host's caches could be
    # keyed to another model.
    base = ["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"]
    assert runtime.gpu_name_query({}) == base
    assert runtime.gpu_name_query({"CUDA_VISIBLE_DEVICES": "2"}) == [*base, "-i", "2"]
    assert runtime.gpu_name_query({"CUDA_VISIBLE_DEVICES": "GPU-8f1e2c, 3"}) == [*base, "-i", "GPU-8f1e2c"]
