"""How nvImageCodec is set up, as ``--gpu-decoder`` spells it (parsing needs no GPU)."""

import pytest

from facestream.detector_service.decoding.gpu_decode_settings import DEFAULT_GPU_DECODER, GpuDecodeSettings


def test_the_default_is_the_hardware_decoder_called_once_a_batch() -> None:
    assert GpuDecodeSettings.parse("hw/native") == GpuDecodeSettings()
    assert DEFAULT_GPU_DECODER == "hw/native"
    assert GpuDecodeSettings.parse("hw/keep") == GpuDecodeSettings(native=False)
    assert GpuDecodeSettings.parse("all") == GpuDecodeSettings(backends="all", keep_images=False, native=False)


def test_backends_then_flags_in_any_order() -> None:
    expected = GpuDecodeSettings(backends="hw", cpu_threads=4, keep_images=True, chunk=64, native=False)
    assert GpuDecodeSettings.parse("hw/keep/t4/c64") == expected == GpuDecodeSettings.parse("hw/c64/t4/keep")
    assert GpuDecodeSettings.parse("hw/first/keep") == GpuDecodeSettings(first=True, native=False)
    assert GpuDecodeSettings.parse("hw/d3/keep") == GpuDecodeSettings(decoders=3, native=False)
    assert GpuDecodeSettings.parse("hw/native/t2") == GpuDecodeSettings(cpu_threads=2)
    assert GpuDecodeSettings.parse("hw/keep/native") == GpuDecodeSettings()


@pytest.mark.parametrize(
    "text", ["fast", "hw/quick", "gpu/t", "/keep", "hw/c", "hw/c-1", "hw/d0", "hw/native/d2", "hw/native/c8"]
)
def test_a_misspelt_set_up_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        GpuDecodeSettings.parse(text)


@pytest.mark.parametrize(
    "text",
    [
        "hw/keep",
        "all",
        "all/t4",
        "hybrid/keep/t2",
        "hw/keep/c64",
        "all/t4/c32",
        "hw/keep/first/t2",
        "hw/keep/d2",
        "hw/native",
        "all/native/t4",
    ],
)
def test_the_spelling_reads_back(text: str) -> None:
    assert str(GpuDecodeSettings.parse(text)) == text
