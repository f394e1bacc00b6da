"""The sample photos' folder survives being copied elsewhere: a copied FACESTREAM_HOME still works."""

import os
import shutil
from pathlib import Path

import pytest

from facestream import assets, samples


def test_a_copied_home_works_without_downloading(sample_dir: Path, tmp_path: Path, monkeypatch) -> None:
    copy = tmp_path / "home"
    shutil.copytree(sample_dir, copy / "samples", symlinks=True)
    monkeypatch.setenv("FACESTREAM_HOME", str(copy))
    monkeypatch.setattr(assets, "_pip_download", lambda *a: pytest.fail("the copy should need no download"))
    monkeypatch.setattr(assets, "_index_download", lambda *a: pytest.fail("the copy should need no download"))
    # An absolute link, as older versions made, left dangling by the copy: made anew, not a crash.
    old = copy / "samples" / "portraits" / "obama.jpg"
    old.unlink()
    old.symlink_to(tmp_path / "gone" / "obama.jpg")
    folder = samples.fetch()
    assert folder == copy / "samples"
    for sub in ("portraits", "annotated", "people"):
        for link in (folder / sub).iterdir():
            assert not os.path.isabs(os.readlink(link)), link
            assert link.resolve().parent == folder and link.resolve().is_file(), link
    assert len(list(samples.portraits_dir().iterdir())) == len(samples.PORTRAITS)


def test_the_footage_is_opencv_s_pedestrian_video(sample_dir: Path) -> None:
    import cv2

    video = cv2.VideoCapture(str(sample_dir / samples.FOOTAGE.filename))
    assert video.isOpened()
    size = (video.get(cv2.CAP_PROP_FRAME_WIDTH), video.get(cv2.CAP_PROP_FRAME_HEIGHT))
    assert (size, video.get(cv2.CAP_PROP_FPS), video.get(cv2.CAP_PROP_FRAME_COUNT)) == ((768, 576), 10, 795)
