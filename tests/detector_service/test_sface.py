"""SFace embeddings against OpenCV's own FaceRecognizerSF, on real photos: the same crops, the same
vectors; the patched file batches; one person's photos are closer to each other than to anyone else."""

from pathlib import Path

import cv2
import numpy as np
import pytest

from facestream import face_quality, paths
from facestream.detector_service import models
from facestream.detector_service.decoding.sharpness import sharpness
from facestream.detector_service.inference.embedder import Embedder
from facestream.detector_service.models import sface, yunet
from facestream.detector_service.models.base import META_PRECISION, Detections

PHOTOS = ["obama.jpg", "obama2.jpg", "obama3.jpg", "biden.jpg", "einstein.jpg", "breakingbad.jpg"]


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return Embedder("sface", "cpu", threads=2)


@pytest.fixture(scope="module")
def faces(sample_dir: Path, yunet_path: Path) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(photo, image, OpenCV's YuNet row) for every face OpenCV finds, with the zoo's original files."""
    originals = yunet_path.parent / "original"
    detector = cv2.FaceDetectorYN.create(str(originals / Path(yunet.WEIGHTS.member).name), "", (320, 320), 0.6)
    found = []
    for name in PHOTOS:
        image = cv2.imread(str(sample_dir / name))
        detector.setInputSize((image.shape[1], image.shape[0]))
        for row in detector.detect(image)[1]:
            found.append((name, image, row))
    return found


def as_detections(row: np.ndarray) -> Detections:
    box = np.array([[row[0], row[1], row[0] + row[2], row[1] + row[3]]], np.float32)
    return Detections(box, np.array([row[14]], np.float32), row[4:14].reshape(1, 5, 2).astype(np.float32))


def test_embeddings_match_opencvs_face_recognizer(embedder: Embedder, faces) -> None:
    # OpenCV loads the zoo's file as it ships (fetched beside the patched copy).
    original = paths.models_dir() / "original" / Path(sface.WEIGHTS.member).name
    recognizer = cv2.FaceRecognizerSF.create(str(original), "")
    assert len(faces) >= 8
    for name, image, row in faces:
        crop = embedder.crops([image], as_detections(row), np.array([0]))
        expected = recognizer.alignCrop(image, row)
        assert np.abs(crop[0].astype(int) - expected.astype(int)).max() <= 1, name  # warp rounding at most
        reference = recognizer.feature(expected).ravel()
        cosine = float(embedder.embed(crop)[0] @ (reference / np.linalg.norm(reference)))
        assert cosine >= 1 - 1e-3, (name, cosine)


def test_a_batch_embeds_as_its_faces_one_by_one(embedder: Embedder, faces) -> None:
    crops = np.concatenate([embedder.crops([image], as_detections(row), np.array([0])) for _, image, row in faces])
    together = embedder.embed(crops)
    alone = np.concatenate([embedder.embed(crops[i : i + 1]) for i in range(len(crops))])
    np.testing.assert_allclose(together, alone, atol=1e-5)
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)


def test_one_person_is_closer_to_himself_than_to_anyone_else(embedder: Embedder, faces) -> None:
    """The evidence behind the stranger threshold (docs): measured on these photos."""
    vectors = embedder.embed(
        np.concatenate([embedder.crops([image], as_detections(row), np.array([0])) for _, image, row in faces])
    )
    similarity = vectors @ vectors.T
    obama = np.array([name.startswith("obama") for name, _, _ in faces])
    same = similarity[np.ix_(obama, obama)][~np.eye(obama.sum(), dtype=bool)]
    different = np.concatenate(
        [
            similarity[np.ix_(obama, ~obama)].ravel(),
            similarity[np.ix_(~obama, ~obama)][~np.eye((~obama).sum(), dtype=bool)],
        ]
    )
    assert same.min() > 0.7 and different.max() < 0.3, (same, different)


def test_box_crops_for_a_detector_without_landmarks(faces) -> None:
    embedder = Embedder("sface", "cpu", threads=1, landmarks=False)
    name, image, row = faces[0]
    crop = embedder.crops([image], as_detections(row), np.array([0]))
    assert crop.shape == (1, sface.SIZE, sface.SIZE, 3) and crop.std() > 10
    assert "box crops" in embedder.describe()


@pytest.mark.slow
def test_the_float16_copy_embeds_as_float32_does(embedder: Embedder, faces) -> None:
    """The copy a GPU embedder runs: the same identities, so a gallery enrolled on a CPU still matches."""
    from facestream.detector_service.inference.engine import Engine

    path = sface.fetch(paths.models_dir(), fp16=True)
    assert models.read_metadata(path)[META_PRECISION] == "fp16"
    half = Engine(path, (sface.SIZE, sface.SIZE), 64, sface.SFace(embedder.ref), "cpu", threads=2)
    crops = np.concatenate([embedder.crops([image], as_detections(row), np.array([0])) for _, image, row in faces])
    full, vectors = embedder.embed(crops), half.run(crops)["fc1"]
    cosines = (full * vectors).sum(axis=1) / np.linalg.norm(vectors, axis=1)
    assert cosines.min() >= 1 - 1e-3, cosines


def test_a_blurred_face_is_measured_as_less_sharp_and_refused(embedder: Embedder, faces) -> None:
    # The same faces, sharp and blurred (sigma a sixth of the face's width): the sharp crops pass the
    # quality gate's sharpness, the blurred ones fail it, and each is less sharp than its original.
    for name, image, row in faces[:4]:
        blurred = cv2.GaussianBlur(image, (0, 0), row[2] / 6)
        sharp, soft = (
            sharpness(embedder.crops([img], as_detections(row), np.array([0])))[0] for img in (image, blurred)
        )
        assert sharp > face_quality.SHARP and soft < face_quality.BLURRED + 2 and soft < sharp / 10, (name, sharp, soft)
