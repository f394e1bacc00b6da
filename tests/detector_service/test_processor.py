"""Where the processor decodes JPEGs: on the GPU only with a GPU engine, and never silently elsewhere."""

from pathlib import Path

import pytest

from facestream.detector_service import models
from facestream.detector_service.engine import Engine
from facestream.detector_service.preprocess import Preprocessor
from facestream.detector_service.processor import FrameProcessor
from facestream.detector_service.stats import Stats
from facestream.errors import ConfigError


@pytest.fixture(scope="module")
def cpu_engine(yunet_path: Path) -> tuple[Engine, object]:
    plugin = models.plugin_for(models.read_metadata(yunet_path), "yunet")
    return Engine(yunet_path, (96, 128), batch=2, plugin=plugin, provider="cpu", threads=1), plugin


def processor(cpu_engine, decode: str) -> FrameProcessor:
    engine, plugin = cpu_engine
    return FrameProcessor(engine, plugin, plugin.default_thresholds, 1, Stats("cpu", False), decode)


def test_a_cpu_engine_decodes_on_the_cpu_and_that_is_no_fallback(cpu_engine) -> None:
    proc = processor(cpu_engine, "auto")
    try:
        assert isinstance(proc.preprocessor, Preprocessor)
        assert proc.stats.decoder == "cpu" and not proc.stats.decode_fallback
        assert "decoder cpu" in proc.stats.line()
    finally:
        proc.close()


def test_gpu_decoding_asked_for_without_a_gpu_engine_is_an_error(cpu_engine) -> None:
    with pytest.raises(ConfigError, match="GPU decoding was asked for but cannot run"):
        processor(cpu_engine, "gpu")
