"""Where the processor decodes JPEGs: on the GPU only with a GPU engine, and never silently elsewhere."""

from pathlib import Path

import cv2
import numpy as np
import pytest

from facestream.detector_service import models
from facestream.detector_service.decoding.preprocess import Preprocessor
from facestream.detector_service.inference.embedder import Embedder
from facestream.detector_service.inference.engine import Engine
from facestream.detector_service.processor import FrameProcessor
from facestream.detector_service.stats import Stats
from facestream.detector_service.tracks import Policy
from facestream.errors import ConfigError
from facestream.schemas import Frame


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


def test_faces_carry_embeddings_cut_from_their_full_size_frames(yunet_path: Path, sample_dir: Path) -> None:
    plugin = models.plugin_for(models.read_metadata(yunet_path), "yunet")
    engine = Engine(yunet_path, (480, 640), batch=4, plugin=plugin, provider="cpu", threads=2)
    embedder = Embedder("sface", "cpu", threads=2)
    proc = FrameProcessor(engine, plugin, plugin.default_thresholds, 2, Stats("cpu", False), "auto", embedder=embedder)
    frames = []
    for seq, name in enumerate(["obama.jpg", "obama2.jpg", "biden.jpg"]):
        data = (sample_dir / name).read_bytes()
        height, width = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR).shape[:2]
        frames.append(Frame(f"cam{seq}", seq, 0, width, height, data))  # three cameras: each face starts a track
    try:
        events = [outcome.event for outcome in proc.finish(proc.begin(frames, [0, 1, 2]))]
    finally:
        proc.close()
    assert all(event.embedder == embedder.ref and len(event.faces) == 1 for event in events)
    vectors = [np.frombuffer(event.faces[0].embedding, "<f2").astype(np.float32) for event in events]
    assert all(abs(float(np.linalg.norm(v)) - 1) < 1e-3 for v in vectors)
    assert vectors[0] @ vectors[1] > 0.7 and vectors[0] @ vectors[2] < 0.3  # the same man, then another
    assert all(event.faces[0].sharpness > 100 for event in events)  # sharp photos, measured on their crops
    assert proc.stats.embed_s > 0 and " embed " in proc.stats.line()


def test_a_face_is_embedded_when_its_track_starts_and_again_when_due(yunet_path: Path, sample_dir: Path) -> None:
    """One camera showing one face at 10 fps for 2.5 s: embedded in its track's first two frames, carried
    by its track (same id, no embedding, its own sharpness) until 2 s of capture time have passed since;
    frames sent again (a replay) start a new track. With every_frame, every face is embedded and still
    names its track."""
    plugin = models.plugin_for(models.read_metadata(yunet_path), "yunet")
    data = (sample_dir / "obama.jpg").read_bytes()
    height, width = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR).shape[:2]
    frames = [Frame("door", seq, seq * 100_000_000, width, height, data) for seq in range(25)]
    found = {}
    for every_frame in (False, True):
        engine = Engine(yunet_path, (480, 640), batch=5, plugin=plugin, provider="cpu", threads=2)
        stats = Stats("cpu", False)
        proc = FrameProcessor(
            engine,
            plugin,
            plugin.default_thresholds,
            2,
            stats,
            "auto",
            embedder=Embedder("sface", "cpu", threads=2),
            policy=Policy(refresh_s=2.0, better_by=0.05, every_frame=every_frame, first=2),
        )
        try:
            batches = [frames[i : i + 5] for i in range(0, 25, 5)] + [frames[:5]]
            found[every_frame] = [
                o.event.faces[0] for batch in batches for o in proc.finish(proc.begin(batch, list(range(len(batch)))))
            ]
        finally:
            proc.close()
        assert (stats.faces_embedded, stats.faces_carried) == ((30, 0) if every_frame else (5, 25))
    faces = found[False]
    embedded = [i for i, face in enumerate(faces) if face.embedding is not None]
    assert embedded == [0, 1, 21, 25, 26]  # the first two faces, 2 s later, and the replay's first two
    assert len({face.track for face in faces[:25]}) == 1 and faces[25].track != faces[0].track
    assert all(face.sharpness is not None and face.sharpness > 50 for face in faces)
    every = found[True]
    assert all(face.embedding is not None for face in every) and len({f.track for f in every[:25]}) == 1
