from pathlib import Path

import cv2
import numpy as np
import pytest
from helpers.pictures import picture

from facestream.errors import SourceError
from facestream.producers.encoder import JpegEncoder
from facestream.producers.sources import CaptureSource, ImageSource, open_source


def write_images(folder: Path, count: int) -> list[Path]:
    paths = []
    for i in range(count):
        path = folder / f"img{i}.png"
        cv2.imwrite(str(path), np.full((40, 60, 3), i * 10, np.uint8))
        paths.append(path)
    return paths


def test_folder_glob_and_file(tmp_path: Path) -> None:
    write_images(tmp_path, 3)
    (tmp_path / "notes.txt").write_text("not an image")
    assert len(list(open_source(str(tmp_path)).frames())) == 3
    assert len(list(open_source(str(tmp_path / "img*.png")).frames())) == 3
    assert len(list(open_source(str(tmp_path / "img1.png")).frames())) == 1


def test_unreadable_images_are_skipped_with_a_warning(tmp_path: Path, caplog) -> None:
    write_images(tmp_path, 1)
    (tmp_path / "broken.jpg").write_bytes(b"\xff\xd8 truncated")
    assert len(list(ImageSource(sorted(tmp_path.iterdir())).frames())) == 1
    assert "broken.jpg" in caplog.text
    with pytest.raises(SourceError, match="none of the 1 file"):
        list(ImageSource([tmp_path / "broken.jpg"]).frames())


def test_video_files_are_read_picture_by_picture(tmp_path: Path) -> None:
    path = tmp_path / "clip.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10, (64, 48))
    for i in range(5):
        writer.write(np.full((48, 64, 3), i * 40, np.uint8))
    writer.release()
    source = open_source(str(path))
    assert isinstance(source, CaptureSource)
    assert len(list(source.frames())) == 5


@pytest.mark.parametrize("spec", ["/no/such/file.mp4", "/no/such/dir/*.jpg"])
def test_names_that_name_nothing(spec: str) -> None:
    with pytest.raises(SourceError, match="is not a file"):
        open_source(spec)


def test_unopenable_capture_is_a_source_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.mp4"
    bad.write_bytes(b"no video here")
    with pytest.raises(SourceError, match="cannot open"):
        list(open_source(str(bad)).frames())


def test_encoder_scales_down_to_max_width() -> None:
    data, width, height = JpegEncoder(quality=80, max_width=320).encode(picture(np.zeros((480, 640, 3), np.uint8)))
    assert (width, height) == (320, 240)
    assert cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR).shape == (240, 320, 3)
    assert JpegEncoder(max_width=0).encode(picture(np.zeros((10, 4000, 3), np.uint8)))[1:] == (4000, 10)


def test_the_jpeg_keeps_the_picture_s_colours() -> None:
    """Full-range YUV, as JFIF stores it: a limited-range conversion would wash every colour out."""
    rng = np.random.default_rng(1)
    image = cv2.GaussianBlur(rng.integers(0, 256, (240, 320, 3), dtype=np.uint8), (15, 15), 0)
    image[:40] = (0, 0, 0)
    image[40:80] = (255, 255, 255)
    image[80:120] = (40, 60, 220)
    data, _, _ = JpegEncoder(quality=95).encode(picture(image))
    decoded = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    assert np.abs(decoded.astype(int) - image).mean() < 3
    assert decoded[5:35].max() < 8 and decoded[45:75].min() > 247


def test_encoder_frame_size_covers_and_crops_the_centre() -> None:
    portrait = np.zeros((800, 640, 3), np.uint8)
    portrait[160:640] = 255  # the middle 480 rows: what a 640x480 camera would keep
    data, width, height = JpegEncoder(frame_size=(640, 480)).encode(picture(portrait))
    decoded = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    assert (width, height) == (640, 480) and decoded.shape == (480, 640, 3)
    assert decoded[5:-5].min() > 200  # nothing of the black bands survives the crop
    small_wide = np.zeros((100, 400, 3), np.uint8)  # enlarged to cover 640x480, sides cut
    assert JpegEncoder(frame_size=(640, 480), max_width=320).encode(picture(small_wide))[1:] == (640, 480)
    odd = JpegEncoder(frame_size=(333, 215)).encode(picture(np.zeros((500, 700, 3), np.uint8)))
    assert odd[1:] == (333, 215) and cv2.imdecode(np.frombuffer(odd[0], np.uint8), 1).shape == (215, 333, 3)
