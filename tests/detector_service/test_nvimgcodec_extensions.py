"""nvImageCodec is pointed at its JPEG extensions alone, so a GPU start does not try (and fail, with
errors in the log) to load the JPEG 2000 and TIFF ones. The selection is tested here on a package
folder laid out as the nvidia-nvimgcodec wheel lays it out; tests/detector_service/test_preprocess_gpu.py
runs the real one."""

from pathlib import Path

import pytest

from facestream.detector_service.decoding import nvimgcodec_extensions as extensions

WHEEL_EXTENSIONS = [
    "libnvjpeg_ext.so.0.9.0",
    "libjpeg_turbo_ext.so.0.9.0",
    "libnvjpeg2k_ext.so.0.9.0",
    "libnvtiff_ext.so.0.9.0",
    "libtiff_ext.so.0.9.0",
    "libnvbmp_ext.so.0.9.0",
    "libnvpnm_ext.so.0.9.0",
]


@pytest.fixture
def wheel(tmp_path: Path, monkeypatch) -> Path:
    """The wheel's ``nvidia/nvimgcodec/extensions`` folder; the variable unset, as in a new process."""
    folder = tmp_path / "site" / "nvidia" / "nvimgcodec" / "extensions"
    folder.mkdir(parents=True)
    for name in WHEEL_EXTENSIONS:
        (folder / name).write_bytes(b"")
    monkeypatch.delenv(extensions.ENV, raising=False)
    monkeypatch.setattr(extensions.tempfile, "gettempdir", lambda: str(tmp_path))
    return folder


def test_only_the_jpeg_extensions_are_linked(wheel: Path, monkeypatch) -> None:
    assert extensions.select_jpeg_only(wheel) is None
    chosen = Path(extensions.os.environ[extensions.ENV])
    assert sorted(p.name for p in chosen.iterdir()) == ["libjpeg_turbo_ext.so.0.9.0", "libnvjpeg_ext.so.0.9.0"]
    assert all(p.resolve().parent == wheel for p in chosen.iterdir())
    monkeypatch.delenv(extensions.ENV)
    assert extensions.select_jpeg_only(wheel) is None  # a second process finds the folder made


def test_a_missing_jpeg_decoder_is_reported(wheel: Path) -> None:
    (wheel / "libnvjpeg_ext.so.0.9.0").unlink()
    reason = extensions.select_jpeg_only(wheel)
    assert reason is not None and "libnvjpeg_ext" in reason and str(wheel) in reason
    assert extensions.ENV not in extensions.os.environ


def test_a_path_the_user_set_is_kept(wheel: Path, monkeypatch) -> None:
    monkeypatch.setenv(extensions.ENV, "/opt/my-extensions")
    assert extensions.select_jpeg_only(wheel) is None
    assert extensions.os.environ[extensions.ENV] == "/opt/my-extensions"
