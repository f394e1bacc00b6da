"""What a camera reads from: a video file, an image file, folder or glob, a camera index, or a URL.

Files are read when a frame is due, with PyAV (FFmpeg) as live cameras are: video files picture by
picture; images once, kept in memory when there are few of them, so a looping demo costs no disk
reads. Both yield ``(key, picture)``, the picture an ``av.VideoFrame`` as decoded: a still image's key
is its path (the same key always means the same pixels, so its JPEG can be reused); a video frame's is
None. Live sources (RTSP/HTTP URLs, camera indexes) run on their own, as ``live.LiveSource``.
"""

import glob
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import av

from facestream.errors import SourceError
from facestream.producers.live import LiveSettings, LiveSource

log = logging.getLogger(__name__)

IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png", ".bmp", ".ppm", ".pgm", ".webp", ".tif", ".tiff"}
CACHE_LIMIT = 64  # images kept decoded in memory


class ImageSource:
    def __init__(self, files: list[Path]) -> None:
        self.files = files
        self._cache: dict[Path, Any] = {}

    def frames(self) -> Iterator[tuple[str | None, Any]]:
        readable = 0
        for path in self.files:
            image = self._cache.get(path)
            if image is None:
                image = read_image(path)
                if image is None:
                    continue
                if len(self.files) <= CACHE_LIMIT:
                    self._cache[path] = image
            readable += 1
            yield str(path), image
        if readable == 0:
            raise SourceError(f"none of the {len(self.files)} file(s) is a readable image")


def read_image(path: Path) -> Any:
    """An image file's picture (an ``av.VideoFrame``), or None, logged, when it is not a readable image."""
    try:
        with av.open(str(path)) as container:
            return next(container.decode(video=0))
    except (av.FFmpegError, StopIteration, IndexError) as exc:
        log.warning("skipping %s: not a readable image (%s)", path, getattr(exc, "strerror", None) or "no picture")
        return None


class CaptureSource:
    """A video file, decoded picture by picture."""

    def __init__(self, spec: str) -> None:
        self.spec = spec

    def frames(self) -> Iterator[tuple[str | None, Any]]:
        try:
            container = av.open(self.spec)
        except av.FFmpegError as exc:
            raise SourceError(f"cannot open {self.spec!r} as a video file: {exc.strerror}") from None
        try:
            if not container.streams.video:
                raise SourceError(f"{self.spec!r} has no video stream")
            try:
                for picture in container.decode(video=0):
                    yield None, picture
            except av.FFmpegError as exc:  # a damaged file ends where it can no longer be read
                log.warning("%s: reading stopped: %s", self.spec, exc.strerror)
        finally:
            container.close()


def open_source(spec: str, live: LiveSettings | None = None) -> ImageSource | CaptureSource | LiveSource:
    """Pick the reader from what ``spec`` looks like; raise SourceError if it names nothing usable. A
    live source is made, not started: it may be down now and come up later."""
    if "://" in spec or spec.isdigit():
        return LiveSource(spec, live or LiveSettings())
    path = Path(spec).expanduser()
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
        if not files:
            raise SourceError(f"folder {spec} holds no images ({', '.join(sorted(IMAGE_SUFFIXES))})")
        return ImageSource(files)
    if path.is_file():
        return ImageSource([path]) if path.suffix.lower() in IMAGE_SUFFIXES else CaptureSource(str(path))
    matches = sorted(Path(p) for p in glob.glob(str(path)) if Path(p).suffix.lower() in IMAGE_SUFFIXES)
    if matches:
        return ImageSource(matches)
    raise SourceError(f"source {spec!r} is not a file, folder, image glob, camera index or URL")
