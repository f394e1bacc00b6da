"""MoveNet converted from TFLite: the file facestream fetched is stamped and still matches the TFLite
interpreter on frames it was not checked on at fetch time (the pedestrian video)."""

from pathlib import Path

import cv2
import numpy as np
import onnxruntime as ort
import pytest

from facestream import assets, paths
from facestream.detector_service import models
from facestream.detector_service.models import movenet, tflite_convert


@pytest.fixture(scope="module")
def movenet_path() -> Path:
    return movenet.fetch(paths.models_dir())


def test_the_fetched_file_names_its_plugin_and_the_tflite_it_came_from(movenet_path: Path) -> None:
    metadata = models.read_metadata(movenet_path)
    assert metadata["facestream.model"] == movenet.NAME
    assert metadata["facestream.weights_sha256"] == movenet.TFLITE_SHA256
    assert assets.sha256_of(paths.models_dir() / "original" / "movenet.tflite") == movenet.TFLITE_SHA256


def test_the_onnx_file_matches_tflite_on_the_pedestrian_video(movenet_path: Path, sample_dir: Path) -> None:
    video = cv2.VideoCapture(str(sample_dir / "vtest.avi"))
    inputs = []
    for index in range(0, 795, 160):
        video.set(cv2.CAP_PROP_POS_FRAMES, index)
        ok, frame = video.read()
        assert ok
        inputs.append(movenet.network_input(frame))
    session = ort.InferenceSession(str(movenet_path), providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    ours = [session.run(None, {name: x})[0] for x in inputs]
    theirs = tflite_convert.reference_outputs(paths.models_dir() / "original" / "movenet.tflite", inputs)
    for a, b in zip(ours, theirs, strict=True):
        assert a.shape == (1, movenet.PEOPLE, 56)
        assert np.abs(a - b).max() < movenet.TOLERANCE


def test_network_input_keeps_the_aspect_and_rounds_sides_to_32() -> None:
    x = movenet.network_input(np.full((576, 768, 3), 200, np.uint8))
    assert x.shape == (1, 192, 256, 3) and x.dtype == np.uint8
    tall = movenet.network_input(np.full((1000, 300, 3), 200, np.uint8))
    assert tall.shape == (1, 256, 96, 3)
    assert (tall[0, :, 77:] == 0).all() and (tall[0, :, :76] == 200).all()  # 77 px of image, then padding
