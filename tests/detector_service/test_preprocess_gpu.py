"""GPU decoding (nvImageCodec + the letterbox kernel) against the CPU path, on the real sample photos.

These need a CUDA GPU with the ``gpu`` extra; they run on the GPU machine (bench/README.md says how),
where they are part of every GPU session's first call. On a machine without one there is nothing to run.
"""

import os
import re
import subprocess
import sys

import numpy as np
import pytest

from facestream import paths
from facestream.detector_service.decoding import nvimgcodec_extensions, preprocess_gpu
from facestream.detector_service.decoding.gpu_decode_settings import GpuDecodeSettings
from facestream.detector_service.decoding.preprocess import DecodeError, Placed, Preprocessor
from facestream.errors import ConfigError
from facestream.schemas import Frame

pytestmark = pytest.mark.skipif(preprocess_gpu.available() is not None, reason="needs CuPy and nvImageCodec (GPU)")


@pytest.fixture(scope="module")
def corpus() -> list[Frame]:
    from bench.pipeline import jpeg_corpus

    return jpeg_corpus(640, 9)  # 640 wide, heights from 427 to 907: shrunk and padded both ways


def decoded_both_ways(frames: list[Frame], input_hw: tuple[int, int]):
    cpu, gpu = Preprocessor(input_hw, threads=4), preprocess_gpu.GpuPreprocessor(input_hw)
    try:
        return cpu.run(frames), gpu.run(frames)
    finally:
        cpu.close()
        gpu.close()


@pytest.mark.parametrize("input_hw", [(480, 640), (960, 1280)])  # shrinking (area) and enlarging (bilinear)
def test_gpu_letterbox_matches_the_cpu_path(corpus: list[Frame], input_hw) -> None:
    (cpu_batch, cpu_placed), (gpu_batch, gpu_placed) = decoded_both_ways(corpus, input_hw)
    assert gpu_placed == cpu_placed
    diff = np.abs(gpu_batch.get().astype(np.int16) - cpu_batch.astype(np.int16))
    # Two JPEG decoders (nvJPEG, libjpeg-turbo) and two resamplers: close, not bit-equal.
    assert diff.mean() < 1.5 and np.percentile(diff, 99.9) <= 12


def test_bad_frames_fail_in_their_slots(corpus: list[Frame]) -> None:
    good = corpus[0]
    frames = [good, Frame("cam", 1, 0, 640, 480, b"junk"), Frame("cam", 2, 0, good.width + 1, good.height, good.data)]
    batch, placed = preprocess_gpu.GpuPreprocessor((480, 640)).run(frames)
    assert isinstance(placed[0], Placed)
    assert isinstance(placed[1], DecodeError) and "do not decode" in str(placed[1])
    assert isinstance(placed[2], DecodeError) and "message says" in str(placed[2])
    assert int(batch[1].max()) == 0 and int(batch[2].max()) == 0


# The default, then one change at a time; decoders sharing a batch, also in several calls each.
@pytest.mark.parametrize(
    "setup", ["hw/keep", "hw/t4", "all/keep", "hw/keep/d2", "hw/keep/c3/d3", "hw/native", "all/native"]
)
def test_decoder_settings_give_the_same_batches(corpus: list[Frame], setup: str) -> None:
    # Against every backend and fresh Images (nvImageCodec's own defaults). Twice, with frames of other
    # sizes and a bad one in between: kept Images are decoded into again.
    reference = preprocess_gpu.GpuPreprocessor((480, 640), settings=GpuDecodeSettings.parse("all"))
    expected, expected_placed = reference.run(corpus)
    gpu = preprocess_gpu.GpuPreprocessor((480, 640), settings=GpuDecodeSettings.parse(setup))
    gpu.run([corpus[0], Frame("cam", 1, 0, 640, 480, b"junk"), *corpus[::-1][: len(corpus) - 2]])
    batch, placed = gpu.run(corpus)
    assert placed == expected_placed
    diff = np.abs(batch.get().astype(np.int16) - expected.get().astype(np.int16))
    assert diff.mean() < 1.0 and diff.max() <= 12  # the hardware and CUDA decoders may round differently


def test_native_decoding_fails_bad_frames_in_their_slots_and_keeps_views_of_the_frames(corpus: list[Frame]) -> None:
    good = corpus[0]
    frames = [good, Frame("cam", 1, 0, 640, 480, b"junk"), Frame("cam", 2, 0, good.width + 1, good.height, good.data)]
    settings = GpuDecodeSettings.parse("hw/native")
    native = preprocess_gpu.GpuPreprocessor((480, 640), settings=settings, keep_frames=True)
    python = preprocess_gpu.GpuPreprocessor((480, 640), settings=GpuDecodeSettings.parse("hw/keep"), keep_frames=True)
    batch, placed = native.run(frames)
    expected, expected_placed = python.run(frames)
    assert [str(p) if isinstance(p, DecodeError) else p.scale for p in placed] == [
        str(p) if isinstance(p, DecodeError) else p.scale for p in expected_placed
    ]
    assert int(batch[1].max()) == 0 and int(batch[2].max()) == 0
    view, image = placed[0].image, expected_placed[0].image
    assert view.shape == (good.height, good.width, 3)
    import cupy as cp

    assert int(cp.abs(view.astype(cp.int16) - cp.asarray(image).astype(cp.int16)).max()) <= 12


def test_a_set_up_this_gpu_refuses_is_a_config_error() -> None:
    # The GPU_ONLY backend alone is refused on the H200; wherever it is refused, the error says what to do.
    try:
        preprocess_gpu.GpuPreprocessor((480, 640), settings=GpuDecodeSettings.parse("gpu")).close()
    except ConfigError as exc:
        assert "--gpu-decoder all" in str(exc)


def test_a_grayscale_jpeg_decodes_as_on_the_cpu() -> None:
    import cv2

    gray = np.tile(np.linspace(0, 255, 320, dtype=np.uint8), (240, 1))
    frames = [Frame("cam", 0, 0, 320, 240, cv2.imencode(".jpg", gray)[1].tobytes())]
    (cpu_batch, cpu_placed), (gpu_batch, gpu_placed) = decoded_both_ways(frames, (240, 320))
    assert gpu_placed == cpu_placed
    assert np.abs(gpu_batch.get().astype(np.int16) - cpu_batch.astype(np.int16)).max() <= 3


def test_the_engine_takes_a_device_batch(corpus: list[Frame], yunet_path) -> None:
    from facestream.detector_service import models
    from facestream.detector_service.inference.engine import Engine

    plugin = models.plugin_for(models.read_metadata(yunet_path), "yunet")
    engine = Engine(yunet_path, (480, 640), batch=8, plugin=plugin, provider="cuda", buckets=(8,))
    batch, _ = preprocess_gpu.GpuPreprocessor((480, 640)).run(corpus[:5])  # a partial bucket: padded on the device
    on_device, from_host = engine.run(batch), engine.run(batch.get())
    for name in on_device:
        np.testing.assert_array_equal(on_device[name], from_host[name])
    # With a score floor only the leading candidates some image has over it come back: the same faces.
    thresholds = plugin.default_thresholds
    trimmed = engine.run(batch, floor=thresholds.score_threshold)
    assert trimmed["scores"].shape[1] < on_device["scores"].shape[1]
    whole, few = (plugin.to_detections(out, (480, 640), thresholds) for out in (on_device, trimmed))
    assert sum(len(d) for d in whole) >= 5
    for a, b in zip(whole, few, strict=True):
        np.testing.assert_array_equal(a.boxes, b.boxes)
        np.testing.assert_array_equal(a.scores, b.scores)


def start_on_the_gpu(env: dict[str, str]) -> subprocess.CompletedProcess:
    """A detector's GPU start in a process of its own (nvImageCodec loads its extensions once per
    process): the engine, the GPU decoder and the warm-up, as `facestream models build-engine` runs them."""
    cmd = [sys.executable, "-m", "facestream", "models", "build-engine", "--batch", "4", "--provider", "cuda"]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)


def test_a_gpu_start_prints_nothing_about_codecs_it_does_not_use() -> None:
    env = {k: v for k, v in os.environ.items() if k != nvimgcodec_extensions.ENV}
    done = start_on_the_gpu(env)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "input 640x480" in output and "decode" in output
    assert not re.search(r"nvjpeg2k|nvtiff|nvcomp|could not load", output, re.IGNORECASE), output


def test_a_missing_jpeg_decoder_fails_the_start_with_a_clear_error(tmp_path) -> None:
    # nvImageCodec pointed at a folder without its JPEG extension: no frame may be dead-lettered for it.
    done = start_on_the_gpu({**os.environ, nvimgcodec_extensions.ENV: str(tmp_path)})
    assert done.returncode != 0
    assert "error:" in done.stderr and re.search("JPEG|nvImageCodec", done.stderr), done.stderr


def test_the_default_falls_back_to_the_python_binding_loudly_without_a_c_compiler(tmp_path) -> None:
    # A home whose native decoder was never built, and no compiler to build it: the start goes on with
    # nvImageCodec's Python binding (hw/keep) and says so; it never fails for want of a compiler.
    (tmp_path / "models").symlink_to(paths.home() / "models")
    done = start_on_the_gpu({**os.environ, "FACESTREAM_HOME": str(tmp_path), "CC": str(tmp_path / "no-cc")})
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert re.search(r"FALLBACK: .*no C compiler.* set up as hw/keep instead", output), output
