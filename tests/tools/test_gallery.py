"""The gallery through the real broker: enrolment with the detector's own models, its refusals, list
and remove on a compacted topic, matches against live faces, and a follower that sees changes live."""

import time
import uuid
from pathlib import Path

import cv2
import numpy as np
import pytest
from click.testing import CliRunner

from facestream import gallery as store
from facestream.detector_service.config import DetectorConfig
from facestream.detector_service.service import build_processor
from facestream.tools.cli import cli
from facestream.tools.gallery import photo_frame


@pytest.fixture
def topic(bootstrap: str) -> str:
    return f"t-{uuid.uuid4().hex[:10]}.gallery"


def run(*args: str):
    return CliRunner().invoke(cli, [*args])


@pytest.fixture(scope="module")
def detector():
    """The detector service's own processor, with embeddings, as a live camera's frames meet it."""
    processor = build_processor(DetectorConfig(provider="cpu", decode="cpu", embedder="sface", batch=1))
    yield processor
    processor.close()


def live_embedding(detector, photo: Path) -> np.ndarray:
    (outcome,) = detector.finish(detector.begin([photo_frame(0, photo)], [photo]))
    return store.as_vector(outcome.event.faces[0].embedding)


def test_enrol_list_remove(topic: str, sample_dir: Path, bootstrap: str) -> None:
    photos = [str(sample_dir / name) for name in ("obama.jpg", "obama2.jpg")]
    result = run("gallery", "enroll", "--name", "Barack Obama", "--topic", topic, "--provider", "cpu", *photos)
    assert result.exit_code == 0, result.output
    listed = run("gallery", "list", "--topic", topic, "--json")
    assert '"person_id": "barack-obama"' in listed.output and '"faces": 2' in listed.output
    entry = store.load(bootstrap, topic).entries()[0]
    assert entry.name == "Barack Obama" and entry.images == ("obama.jpg", "obama2.jpg")
    assert entry.embedder.name == "sface" and all(len(v) == 256 for v in entry.embeddings)
    assert not entry.watched and run("gallery", "watch", "Barack Obama", "--topic", topic).exit_code == 0
    assert store.load(bootstrap, topic).watched_name("barack-obama") == "Barack Obama"
    assert '"watched": true' in run("gallery", "list", "--topic", topic, "--json").output
    assert run("gallery", "watch", "barack-obama", "--off", "--topic", topic).exit_code == 0
    assert store.load(bootstrap, topic).watched_name("barack-obama") is None
    assert run("gallery", "remove", "barack obama", "--topic", topic).exit_code == 0
    assert store.load(bootstrap, topic).entries() == []
    missing = run("gallery", "remove", "barack obama", "--topic", topic)
    assert missing.exit_code != 0 and "not in the gallery" in str(missing.exception)


def test_enrolment_refuses_no_face_and_several_faces(topic: str, sample_dir: Path, tmp_path: Path) -> None:
    blank = tmp_path / "wall.jpg"
    cv2.imwrite(str(blank), np.full((240, 320, 3), 128, np.uint8))
    no_face = run("gallery", "enroll", "--name", "nobody", "--topic", topic, "--provider", "cpu", str(blank))
    assert no_face.exit_code != 0 and "no face found" in str(no_face.exception)
    pair = tmp_path / "pair.jpg"  # Obama, and Biden at half his size beside him
    obama, biden = cv2.imread(str(sample_dir / "obama.jpg")), cv2.imread(str(sample_dir / "biden.jpg"))
    small = cv2.resize(biden, (biden.shape[1] * obama.shape[0] // biden.shape[0] // 2, obama.shape[0] // 2))
    cv2.imwrite(
        str(pair),
        cv2.hconcat([obama, cv2.copyMakeBorder(small, 0, obama.shape[0] - small.shape[0], 0, 0, cv2.BORDER_CONSTANT)]),
    )
    several = run("gallery", "enroll", "--name", "cast", "--topic", topic, "--provider", "cpu", str(pair))
    assert several.exit_code != 0 and "2 faces; pass --largest" in str(several.exception)
    largest = ["gallery", "enroll", "--name", "cast", "--topic", topic, "--provider", "cpu", "--largest"]
    assert run(*largest, str(pair)).exit_code == 0


def test_enrolment_refuses_a_face_too_small_or_turned_away_saying_why(
    topic: str, sample_dir: Path, tmp_path: Path
) -> None:
    takeo = cv2.imread(str(sample_dir / "takeo.ppm"))
    tiny = tmp_path / "takeo-tiny.jpg"  # his face 22 px high
    cv2.imwrite(str(tiny), cv2.resize(takeo, (takeo.shape[1] // 4, takeo.shape[0] // 4), interpolation=cv2.INTER_AREA))
    small = run("gallery", "enroll", "--name", "takeo", "--topic", topic, "--provider", "cpu", str(tiny))
    assert small.exit_code != 0 and "takeo-tiny.jpg: the face is too small (22 px" in str(small.exception)
    turned = str(sample_dir / "breakingbad.jpg")  # the larger of its two faces is seen three-quarters on
    cast = run("gallery", "enroll", "--name", "walter", "--topic", topic, "--provider", "cpu", "--largest", turned)
    assert cast.exit_code != 0 and "the face is turned away from the camera" in str(cast.exception)


def test_the_gallery_tells_people_apart_and_follows_changes(
    topic: str, sample_dir: Path, bootstrap: str, detector
) -> None:
    follower = store.Follower(bootstrap, topic).start()
    try:
        assert follower.gallery.entries() == []
        enrolled = run(
            "gallery",
            "enroll",
            "--name",
            "Barack Obama",
            "--topic",
            topic,
            "--provider",
            "cpu",
            str(sample_dir / "obama.jpg"),
        )
        assert enrolled.exit_code == 0, enrolled.output
        deadline = time.monotonic() + 20
        while not follower.gallery.entries() and time.monotonic() < deadline:
            time.sleep(0.1)
        entry = follower.gallery.entries()[0]
        for photo, expected in (("obama3.jpg", "barack-obama"), ("biden.jpg", None)):
            vector = live_embedding(detector, sample_dir / photo)
            person, similarity = follower.gallery.best_match(vector, entry.embedder)
            assert (person if similarity >= 0.5 else None) == expected, (photo, similarity)
    finally:
        follower.stop()
