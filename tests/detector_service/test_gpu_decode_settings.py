"""How nvImageCodec is set up, as ``--gpu-decoder`` spells it (parsing needs no GPU)."""

import pytest

from facestream.detector_service.gpu_decode_settings import DEFAULT_GPU_DECODER, GpuDecodeSettings


def test_the_default_is_the_hardware_decoder_into_kept_images() -> None:
    assert GpuDecodeSettings.parse("hw/keep") == GpuDecodeSettings()
    assert DEFAULT_GPU_DECODER == "hw/keep"
    assert GpuDecodeSettings.parse("all") == GpuDecodeSettings(backends="all", keep_images=False)


def test_backends_then_flags_in_any_order() -> None:
    expected = GpuDecodeSettings(backends="hw", cpu_threads=4, keep_images=True)
    assert GpuDecodeSettings.parse("hw/keep/t4") == expected == GpuDecodeSettings.parse("hw/t4/keep")


@pytest.mark.parametrize("text", ["fast", "hw/quick", "gpu/t", "/keep"])
def test_a_misspelt_set_up_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        GpuDecodeSettings.parse(text)


@pytest.mark.parametrize("text", ["hw/keep", "all", "all/t4", "hybrid/keep/t2"])
def test_the_spelling_reads_back(text: str) -> None:
    assert str(GpuDecodeSettings.parse(text)) == text
