"""A barcode of the wall-clock time and frame index, drawn into a raw frame by a test camera and read
back from the frames a producer sends, to measure how old each frame was when it was sent.

The strip is the top 1/20 of the frame: 64 blocks side by side, white for a one and black for a
zero, carrying the time the camera sent the frame (Unix ms, 48 bits), its index (8 bits, modulo
256) and a checksum (8 bits). Blocks of 20 px at 1280 wide survive H.264 and JPEG, and scaling.

``stamp_i420`` is pure Python: the camera runs on Debian's Python with GStreamer, which has no NumPy.
"""

BITS = 64
STRIP_SHARE = 20  # the strip's height is the frame's height over this
WHITE, BLACK, GREY = 235, 16, 128  # video-range luma, and the neutral chroma


def _checksum(payload: bytes) -> int:
    return (sum(payload) + 0x5A) & 0xFF


def _bits(time_ms: int, index: int) -> list[int]:
    payload = (time_ms & (2**48 - 1)).to_bytes(6, "big") + bytes([index & 0xFF])
    word = int.from_bytes(payload + bytes([_checksum(payload)]), "big")
    return [(word >> (BITS - 1 - i)) & 1 for i in range(BITS)]


def stamp_i420(frame: bytearray, width: int, height: int, time_ms: int, index: int) -> None:
    """Draw the strip into an I420 frame in place (luma blocks, grey chroma under them)."""
    strip = max(8, height // STRIP_SHARE) & ~1
    row = bytearray()
    for i, bit in enumerate(_bits(time_ms, index)):
        start, end = i * width // BITS, (i + 1) * width // BITS
        row += bytes([WHITE if bit else BLACK]) * (end - start)
    for y in range(strip):
        frame[y * width : (y + 1) * width] = row
    chroma_w, luma = width // 2, width * height
    for plane in (luma, luma + chroma_w * (height // 2)):
        frame[plane : plane + chroma_w * (strip // 2)] = bytes([GREY]) * (chroma_w * (strip // 2))


def read_stamp(image) -> tuple[int, int] | None:
    """(time in Unix ms, index modulo 256) from a BGR or grey image (NumPy) with a strip, or None when
    no valid strip is there (the checksum does not match)."""
    height, width = image.shape[:2]
    strip = max(8, height // STRIP_SHARE)
    row = image[strip // 4 : strip * 3 // 4]  # the strip's middle rows only: cheap on any frame size
    row = row if row.ndim == 2 else row.mean(axis=2)
    bits = []
    for i in range(BITS):
        start, end = i * width // BITS, (i + 1) * width // BITS
        margin = (end - start) // 4
        bits.append(int(row[:, start + margin : end - margin].mean() > GREY))
    word = sum(bit << (BITS - 1 - i) for i, bit in enumerate(bits)).to_bytes(8, "big")
    if _checksum(word[:7]) != word[7]:
        return None
    return int.from_bytes(word[:6], "big"), word[6]
