"""MoveNet converted from TFLite: the file facestream fetched is stamped and still matches the TFLite
interpreter on frames it was not checked on at fetch time (the pedestrian video), the engine's batched
decoding gives each image what the file gives it alone, and the processor the service runs finds the
basketball players upright, and lying once their photo is turned."""

from pathlib import Path

import cv2
import numpy as np
import onnx
import onnxruntime as ort
import pytest

from facestream import assets, paths
from facestream.alerting.rules.fall import FallSettings, torso
from facestream.detector_service import models
from facestream.detector_service.inference import runtime
from facestream.detector_service.inference.engine import Engine, load_graph
from facestream.detector_service.inference.runtime import SessionPlan
from facestream.detector_service.models import graph_rewrite, movenet, tflite_convert
from facestream.detector_service.processor import FrameProcessor
from facestream.detector_service.stats import Stats
from facestream.schemas import Frame, PoseEvent


@pytest.fixture(scope="module")
def movenet_path() -> Path:
    return movenet.fetch(paths.models_dir())


def test_the_fetched_file_names_its_plugin_and_the_tflite_it_came_from(movenet_path: Path) -> None:
    metadata = models.read_metadata(movenet_path)
    assert metadata["facestream.model"] == movenet.NAME
    assert metadata["facestream.weights_sha256"] == movenet.TFLITE_SHA256
    assert assets.sha256_of(paths.models_dir() / "original" / "movenet.tflite") == movenet.TFLITE_SHA256


def video_inputs(sample_dir: Path, every: int) -> list[np.ndarray]:
    """MoveNet's (1, H, W, 3) input for every ``every``-th frame of the pedestrian video."""
    video = cv2.VideoCapture(str(sample_dir / "vtest.avi"))
    inputs = []
    for index in range(0, 795, every):
        video.set(cv2.CAP_PROP_POS_FRAMES, index)
        ok, frame = video.read()
        assert ok
        inputs.append(movenet.network_input(frame))
    return inputs


def test_the_onnx_file_matches_tflite_on_the_pedestrian_video(movenet_path: Path, sample_dir: Path) -> None:
    inputs = video_inputs(sample_dir, 160)
    session = ort.InferenceSession(str(movenet_path), providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    ours = [session.run(None, {name: x})[0] for x in inputs]
    theirs = tflite_convert.reference_outputs(paths.models_dir() / "original" / "movenet.tflite", inputs)
    for a, b in zip(ours, theirs, strict=True):
        assert a.shape == (1, movenet.PEOPLE, 56)
        assert np.abs(a - b).max() < movenet.TOLERANCE


def test_the_engine_decodes_a_batch_as_the_file_decodes_each_image_alone(movenet_path: Path, sample_dir: Path) -> None:
    # The file's own decoding takes one image per run; the engine's graph decodes N at once.
    frames = [x[0] for x in video_inputs(sample_dir, 53)]
    images = np.stack([*frames, np.zeros_like(frames[0])])  # and one with nobody in it
    plugin = models.plugin_for(models.read_metadata(movenet_path), str(movenet_path))
    engine = Engine(movenet_path, images.shape[1:3], batch=len(images), plugin=plugin, provider="cpu", threads=2)
    try:
        batched = next(iter(engine.run(images[..., ::-1].copy()).values()))  # the engine takes BGR
    finally:
        engine.close()
    session = ort.InferenceSession(str(movenet_path), providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    alone = np.concatenate([session.run(None, {name: image[None]})[0] for image in images])
    # A GPU bucket's session has every size fixed, and ORT optimises such a graph further: also on the CPU.
    plan = SessionPlan(input_name=graph_rewrite.IMAGE_INPUT, input_shape=images.shape, threads=2)
    graph = load_graph(movenet_path, plugin).SerializeToString()
    static, _, _ = runtime.open_session(movenet_path, runtime.select("cpu"), plan, graph=graph)
    fixed = static.run(None, {graph_rewrite.IMAGE_INPUT: images[..., ::-1].copy()})[0]
    assert batched.shape == fixed.shape == (len(images), movenet.PEOPLE, 56)
    assert np.abs(batched - alone).max() < 1e-5 and np.abs(fixed - alone).max() < 1e-5
    assert (alone[:-1, :, 55] > plugin.default_thresholds.score_threshold).any()  # people were there to find


def test_a_float16_copy_finds_the_same_people_within_a_pixel(movenet_path: Path, sample_dir: Path, tmp_path) -> None:
    # As `facestream export fp16` makes it: the network in float16, the batch decoding kept float32.
    copy = tmp_path / "movenet-fp16.onnx"
    onnx.save(models.float16_copy(movenet_path), str(copy))
    assert models.read_metadata(copy)["facestream.precision"] == "fp16"
    images = np.stack([x[0] for x in video_inputs(sample_dir, 20)])[..., ::-1].copy()  # the engine takes BGR
    outputs = []
    for path in (movenet_path, copy):
        plugin = models.plugin_for(models.read_metadata(path), str(path))
        engine = Engine(path, images.shape[1:3], batch=len(images), plugin=plugin, provider="cpu", threads=2)
        try:
            outputs.append(next(iter(engine.run(images).values())))
        finally:
            engine.close()
    full, half = outputs
    found = full[:, :, 55] > plugin.default_thresholds.score_threshold
    assert found.sum() > 50 and np.array_equal(found, half[:, :, 55] > plugin.default_thresholds.score_threshold)
    difference = np.abs(full - half)[found]
    assert difference.max() < 2e-3  # of the input's sides (0.5 px at 256) and of scores


def test_network_input_keeps_the_aspect_and_rounds_sides_to_32() -> None:
    x = movenet.network_input(np.full((576, 768, 3), 200, np.uint8))
    assert x.shape == (1, 192, 256, 3) and x.dtype == np.uint8
    tall = movenet.network_input(np.full((1000, 300, 3), 200, np.uint8))
    assert tall.shape == (1, 256, 96, 3)
    assert (tall[0, :, 77:] == 0).all() and (tall[0, :, :76] == 200).all()  # 77 px of image, then padding


def _pose_events(path: Path, images: list[np.ndarray]) -> list:
    """Pose events of ``images`` (as JPEG frames) from the processor the service runs, on the CPU."""
    plugin = models.plugin_for(models.read_metadata(path), str(path))
    engine = Engine(path, plugin.input_spec.resolve(None), batch=len(images), plugin=plugin, provider="cpu", threads=2)
    proc = FrameProcessor(engine, plugin, plugin.default_thresholds, 2, Stats("cpu", False))
    frames = []
    for seq, image in enumerate(images):
        data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 95])[1].tobytes()
        frames.append(Frame("court", seq, 0, image.shape[1], image.shape[0], data))
    try:
        return [outcome.event for outcome in proc.finish(proc.begin(frames, list(range(len(frames)))))]
    finally:
        proc.close()


def test_every_player_is_found_upright_and_lying_once_the_photo_is_turned(movenet_path: Path, sample_dir: Path) -> None:
    settings = FallSettings()
    for name in ("basketball1.png", "basketball2.png"):
        photo = cv2.imread(str(sample_dir / name))
        upright, turned = _pose_events(movenet_path, [photo, cv2.rotate(photo, cv2.ROTATE_90_COUNTERCLOCKWISE)])
        assert isinstance(upright, PoseEvent) and (upright.width, upright.height) == (640, 480)
        assert len(upright.persons) == 2, (name, upright.persons)  # the two players
        for person in upright.persons:
            x0, y0, x1, y1 = person.box
            assert 0 <= x0 < x1 <= 640 and 0 <= y0 < y1 <= 480
            assert all(x0 - 20 <= x <= x1 + 20 and y0 - 20 <= y <= y1 + 20 for x, y, s in person.keypoints if s > 0.3)
            assert torso(person, settings.min_keypoint_score).angle_deg < settings.upright_deg, (name, person)
        assert len(turned.persons) >= 1
        for person in turned.persons:
            assert torso(person, settings.min_keypoint_score).angle_deg > settings.down_deg, (name, person)


@pytest.mark.slow
def test_converting_says_how_close_it_came_in_the_log_not_on_stdout(
    movenet_path: Path, tmp_path: Path, capsys, caplog
) -> None:
    # `facestream pose` converts on first use, and printed the figure where its data goes.
    (tmp_path / "original").mkdir()
    (tmp_path / "original" / "movenet.tflite").symlink_to(paths.models_dir() / "original" / "movenet.tflite")
    caplog.set_level("INFO")
    converted = movenet.fetch(tmp_path)
    assert converted.exists() and capsys.readouterr().out == ""
    assert "largest difference from the TFLite interpreter" in caplog.text
