"""Faces cut and embedded on the GPU, from the frames nvImageCodec decoded, against the host path.

Like test_preprocess_gpu.py these need a CUDA GPU with the ``gpu`` extra and run on the GPU machine
(bench/README.md says how); elsewhere there is nothing to run.
"""

from pathlib import Path

import numpy as np
import pytest

from facestream.detector_service import models
from facestream.detector_service.decoding import align, preprocess_gpu
from facestream.detector_service.decoding.gpu_decode_settings import GpuDecodeSettings
from facestream.detector_service.decoding.sharpness import sharpness
from facestream.detector_service.inference.embedder import Embedder
from facestream.detector_service.inference.engine import Engine
from facestream.detector_service.models import sface
from facestream.detector_service.processor import FrameProcessor
from facestream.detector_service.stats import Stats
from facestream.detector_service.tracks import CameraKeys, Policy
from facestream.schemas import Frame

pytestmark = pytest.mark.skipif(preprocess_gpu.available() is not None, reason="needs CuPy and nvImageCodec (GPU)")
# The Python binding hands the embedder a list of Images, the native call a table of device addresses.
EVERY_FRAME = Policy(every_frame=True)
DECODERS = pytest.mark.parametrize("gpu_decoder", ["hw/keep", "hw/native"])


@pytest.fixture(scope="module")
def corpus() -> list[Frame]:
    from bench.embedding import tiled_corpus

    return tiled_corpus(3, 640, 480, 8)  # three faces a frame, the four portraits turning


def test_the_gpu_warp_matches_the_host_warp_on_the_same_frames(corpus: list[Frame]) -> None:
    import cupy as cp

    from facestream.detector_service.decoding.align_gpu import GpuWarper

    decoder = preprocess_gpu.GpuPreprocessor((480, 640), keep_frames=True)
    _, placed = decoder.run(corpus[:4])
    images = [p.image for p in placed]
    host = [cp.asarray(image).get()[..., ::-1].copy() for image in images]  # nvImageCodec's RGB -> BGR
    rng = np.random.default_rng(1)
    # Faces anywhere, some partly outside their frame (black there, on both paths), turned and scaled.
    angles, scales = rng.uniform(-0.6, 0.6, 40), rng.uniform(0.4, 2.5, 40)
    turns = np.stack([[[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]] for a in angles]) * scales[:, None, None]
    spots = rng.uniform([-60, -60], [580, 420], (40, 2))
    landmarks = np.einsum("fij,kj->fki", turns, sface.TEMPLATE) + spots[:, None, :]
    matrices = align.similarity_transforms(landmarks, sface.TEMPLATE)
    image_of = np.arange(40) % len(images)
    on_device = GpuWarper()(images, image_of, matrices, sface.SIZE).get()
    on_host = align.warp(host, image_of, matrices, sface.SIZE)
    diff = np.abs(on_device.astype(np.int16) - on_host.astype(np.int16))
    # OpenCV interpolates in fixed point (1/32 pixel), the kernel in float: off by a grey level at edges.
    assert diff.mean() < 0.3 and np.percentile(diff, 99.9) <= 2, (diff.mean(), diff.max())
    # Each crop's sharpness, measured where it lies: the same on the device as on the host.
    device_crops = cp.asarray(on_host)
    assert np.allclose(sharpness(device_crops), sharpness(on_host), rtol=1e-3, atol=1e-2)
    decoder.close()


def gpu_processor(yunet_path: Path, batch: int, gpu_decoder: str, policy: Policy = EVERY_FRAME) -> FrameProcessor:
    """YuNet and SFace on the GPU; by default every face embedded (the tiled corpus turns its portraits
    from frame to frame in the same places: one track each, as far as the detector can tell)."""
    plugin = models.plugin_for(models.read_metadata(yunet_path), "yunet")
    engine = Engine(yunet_path, (480, 640), batch=batch, plugin=plugin, provider="cuda", buckets=(batch,))
    embedder = Embedder("sface", engine.provider)
    processor = FrameProcessor(
        engine,
        plugin,
        plugin.default_thresholds,
        4,
        Stats(engine.provider, False),
        "auto",
        GpuDecodeSettings.parse(gpu_decoder),
        embedder=embedder,
        policy=policy,
    )
    processor.warm_up()
    return processor


def host_processor(yunet_path: Path, policy: Policy) -> FrameProcessor:
    """YuNet and SFace on the CPU, batches of 8: what the GPU path is held to."""
    plugin = models.plugin_for(models.read_metadata(yunet_path), "yunet")
    engine = Engine(yunet_path, (480, 640), batch=8, plugin=plugin, provider="cpu", threads=4)
    return FrameProcessor(
        engine,
        plugin,
        plugin.default_thresholds,
        4,
        Stats("cpu", False),
        "cpu",
        embedder=Embedder("sface", "cpu"),
        policy=policy,
    )


def embeddings(events) -> np.ndarray:
    return np.stack([np.frombuffer(f.embedding, "<f2").astype(np.float32) for e in events for f in e.faces])


@DECODERS
def test_faces_are_embedded_on_the_gpu_as_on_the_host(yunet_path: Path, corpus: list[Frame], gpu_decoder: str) -> None:
    processor = gpu_processor(yunet_path, batch=8, gpu_decoder=gpu_decoder)
    try:
        assert processor.stats.decoder == "gpu" and not processor.stats.decode_fallback
        events = [o.event for o in processor.finish(processor.begin(corpus, list(range(len(corpus)))))]
    finally:
        processor.close()
    host = host_processor(yunet_path, EVERY_FRAME)
    try:
        expected = [o.event for o in host.finish(host.begin(corpus, list(range(len(corpus)))))]
    finally:
        host.close()
    assert [len(e.faces) for e in events] == [len(e.faces) for e in expected] == [3] * len(corpus)
    # Two JPEG decoders, FP32 on two devices, float16 on the wire: the same identities.
    cosines = (embeddings(events) * embeddings(expected)).sum(axis=1)
    assert cosines.min() > 0.99, cosines
    # and faces as sharp: the crops differ by a grey level here and there, the sharpness by a little
    on_gpu, on_cpu = ([f.sharpness for e in found for f in e.faces] for found in (events, expected))
    assert np.allclose(on_gpu, on_cpu, rtol=0.15), (on_gpu, on_cpu)


@DECODERS
def test_frames_kept_for_faces_survive_the_next_batch_decoding(
    yunet_path: Path, corpus: list[Frame], gpu_decoder: str
) -> None:
    # The service's order: batch N+1 begun before batch N finishes; kept frames alternate between sets.
    processor = gpu_processor(yunet_path, batch=4, gpu_decoder=gpu_decoder)
    batches = [corpus[:4], corpus[4:], corpus[:4][::-1], corpus[4:][::-1]]
    try:
        alone = [embeddings([o.event for o in processor.finish(processor.begin(b, list(range(4))))]) for b in batches]
        pipelined, pending = [], None
        for frames in batches + [None]:
            following = processor.begin(frames, list(range(4))) if frames else None
            if pending is not None:
                pipelined.append(embeddings([o.event for o in processor.finish(pending)]))
            pending = following
    finally:
        processor.close()
    for got, expected in zip(pipelined, alone):
        np.testing.assert_allclose(got, expected, atol=2e-3)


def test_the_gpu_follows_and_embeds_the_faces_the_host_does(yunet_path: Path) -> None:
    """Faces drifting across four cameras' frames, followed per camera: on the GPU (with the owner's
    sources, as its fronts send them) the same faces are embedded and carried as on the host, in tracks
    of the same faces, and the embeddings made agree."""
    from bench.embedding import camera_frames, moving_corpus

    frames = camera_frames(moving_corpus(2, 640, 480), cameras=4, steps=12, first_step=0, fps=10.0, size=(640, 480))
    batches = [frames[i : i + 8] for i in range(0, len(frames), 8)]
    # Sharp portraits, well over the gate, by time alone: two devices' sharpness differ a little.
    policy = Policy(refresh_s=0.5, better_by=0.3, first=2)
    host = host_processor(yunet_path, policy)
    keys = CameraKeys()
    gpu = gpu_processor(yunet_path, batch=8, gpu_decoder="hw/native", policy=policy)
    try:
        found = {
            "cpu": [o.event for b in batches for o in host.finish(host.begin(b, list(range(len(b)))))],
            "gpu": [o.event for b in batches for o in gpu.finish(gpu.begin(b, list(range(len(b))), keys.sources(b)))],
        }
    finally:
        host.close()
        gpu.close()
    faces = {where: [f for e in events for f in e.faces] for where, events in found.items()}
    assert len(faces["cpu"]) == len(faces["gpu"]) == 2 * len(frames)
    assert [f.embedding is None for f in faces["cpu"]] == [f.embedding is None for f in faces["gpu"]]
    assert 0 < sum(f.embedding is None for f in faces["gpu"]) < len(faces["gpu"])  # some carried, some not
    same_track = {where: [[a.track == b.track for b in fs] for a in fs] for where, fs in faces.items()}
    assert same_track["cpu"] == same_track["gpu"]
    made = [(a, b) for a, b in zip(faces["gpu"], faces["cpu"]) if a.embedding is not None]
    cosines = [
        np.frombuffer(a.embedding, "<f2").astype(np.float32) @ np.frombuffer(b.embedding, "<f2") for a, b in made
    ]
    assert min(cosines) > 0.99, cosines
