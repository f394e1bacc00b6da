"""A stranger's thumbnail: the snapshot cut to the face its sighting boxes."""

from pathlib import Path

import cv2
import numpy as np

from facestream.dashboard.crop import SIDE_MAX, face_crop

BOX = (574.0, 225.0, 820.0, 546.0)  # Biden's face in biden.jpg (1280 x 2082)


def test_the_face_and_a_margin_come_out_no_larger_than_a_thumbnail(sample_dir: Path) -> None:
    photo = (sample_dir / "biden.jpg").read_bytes()
    face = cv2.imdecode(np.frombuffer(face_crop(photo, BOX), np.uint8), cv2.IMREAD_COLOR)
    height, width = face.shape[:2]
    assert max(height, width) == SIDE_MAX
    assert abs(width / height - (BOX[2] - BOX[0]) / (BOX[3] - BOX[1])) < 0.05  # the box's shape, margins alike


def test_a_box_outside_the_frame_or_a_picture_that_does_not_decode_is_given_back_as_it_is(sample_dir: Path) -> None:
    photo = (sample_dir / "biden.jpg").read_bytes()
    assert face_crop(photo, (5000.0, 5000.0, 5100.0, 5100.0)) == photo
    assert face_crop(b"not a jpeg", BOX) == b"not a jpeg"
