"""What a frame may cost before it is decoded: its bytes, and the pixels its JPEG header claims.

A decompression bomb is a small file whose header claims a huge image (65,535 x 65,535 pixels is
4.3 billion, 12 GB decoded): it must be refused from the header alone. Reading a JPEG's size is a
walk over its segment markers to the first start-of-frame; anything that is not a well-formed JPEG
header is left to the decoder, which dead-letters it with its own reason.
"""

from dataclasses import dataclass

from facestream.schemas import Frame

# Start-of-frame markers (baseline, progressive, lossless, arithmetic); C4, C8 and CC are not frames.
_SOF = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}
_STANDALONE = {0x01, *range(0xD0, 0xD8)}  # markers without a length: TEM, RSTn


def jpeg_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) from a JPEG's first start-of-frame segment, or None if the header does not say."""
    if data[:2] != b"\xff\xd8":
        return None
    i = 2
    while i + 4 <= len(data):
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if marker in _STANDALONE:
            i += 2
            continue
        if marker in (0xD9, 0xDA):  # end of image, start of scan: no frame header before them
            return None
        length = int.from_bytes(data[i + 2 : i + 4], "big")
        if marker in _SOF:
            if length < 7 or i + 9 > len(data):
                return None
            height = int.from_bytes(data[i + 5 : i + 7], "big")
            width = int.from_bytes(data[i + 7 : i + 9], "big")
            return width, height
        if length < 2:
            return None
        i += 2 + length
    return None


class LimitError(ValueError):
    """A frame over a limit, refused before decoding; it goes to the dead-letter topic."""


@dataclass(frozen=True)
class FrameLimits:
    max_bytes: int
    max_pixels: int

    def problem(self, record_bytes: int, frame: Frame) -> str | None:
        """Why ``frame`` (from a record of ``record_bytes``) must not be decoded, or None."""
        if record_bytes > self.max_bytes:
            return f"a record of {record_bytes:,} bytes, over --max-frame-bytes {self.max_bytes:,}"
        claimed = [("the message", frame.width, frame.height)]
        size = jpeg_size(frame.data) if frame.encoding == "jpeg" else None
        if size is not None:
            claimed.append(("its JPEG header", *size))
        for who, width, height in claimed:
            if width * height > self.max_pixels:
                return (
                    f"{who} claims {width}x{height} = {width * height:,} pixels, over --max-pixels {self.max_pixels:,}"
                )
        return None
