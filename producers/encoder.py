"""A picture -> JPEG bytes: scaled down to a maximum width first (cameras often send more than needed),
or made exactly one frame size, as a camera of that resolution would frame the scene.

Pictures stay PyAV frames from the decoder to the JPEG: FFmpeg's scaler turns them into full-range
YUV 4:2:0 at the size sent (one planar pass, no BGR copy), and libjpeg-turbo (``simplejpeg``) encodes
those planes directly. With PyAV already there for live cameras this needs no OpenCV, which keeps the
edge install light (docs/deploy.md, "A light producer install").
"""

from dataclasses import dataclass, field

import numpy as np
import simplejpeg
from av.video.reformatter import VideoReformatter

JPEG_YUV = "yuvj420p"  # full-range YUV 4:2:0, as JFIF stores it (limited-range yuv420p would shift every colour)


@dataclass(frozen=True)
class JpegEncoder:
    quality: int = 85
    max_width: int = 1280  # 0 keeps the source's width
    frame_size: tuple[int, int] | None = None  # (width, height): every frame exactly this; max_width then unused
    # FFmpeg's scaling context, kept from frame to frame (made anew for each, it costs 0.6 ms a frame)
    scaler: VideoReformatter = field(default_factory=VideoReformatter, compare=False, repr=False)

    def encode(self, picture) -> tuple[bytes, int, int]:
        """Return (jpeg bytes, width, height) of ``picture`` (an ``av.VideoFrame``) as sent."""
        if self.frame_size is not None:
            planes = cover_crop(picture, *self.frame_size, self.scaler)
        else:
            width, height = picture.width, picture.height
            if self.max_width and width > self.max_width:
                height = max(1, round(height * self.max_width / width))
                width = self.max_width
            planes = planes_of(self.scaler.reformat(picture, width, height, JPEG_YUV, interpolation="AREA"))
        luma = planes[0]
        return simplejpeg.encode_jpeg_yuv_planes(*planes, quality=self.quality), luma.shape[1], luma.shape[0]


def planes_of(frame) -> list[np.ndarray]:
    """A planar frame's planes as arrays (views of its buffers, each row cut to the plane's width)."""
    return [np.frombuffer(p, np.uint8).reshape(p.height, p.line_size)[:, : p.width] for p in frame.planes]


def cover_crop(picture, width: int, height: int, scaler: VideoReformatter) -> list[np.ndarray]:
    """The YUV 4:2:0 planes of ``picture`` scaled to cover ``width`` x ``height`` (aspect kept), then
    cut to exactly that about the centre (on even offsets, where the chroma samples fall)."""
    scale = max(width / picture.width, height / picture.height)
    cover_w, cover_h = max(width, round(picture.width * scale)), max(height, round(picture.height * scale))
    interpolation = "AREA" if scale < 1 else "BILINEAR"
    covered = scaler.reformat(picture, cover_w, cover_h, JPEG_YUV, interpolation=interpolation)
    left, top = (cover_w - width) // 4 * 2, (cover_h - height) // 4 * 2
    luma, blue, red = planes_of(covered)
    chroma = np.s_[top // 2 : top // 2 + (height + 1) // 2, left // 2 : left // 2 + (width + 1) // 2]
    return [luma[top : top + height, left : left + width], blue[chroma], red[chroma]]
