"""A batch packed as the GPU owner reads it: frames as views of their blocks, in order across blocks,
and each frame's address where its bytes lie."""

import ctypes

import numpy as np

from facestream.detector_service.decoding.packed import PackedFrames


def test_frames_of_two_blocks_joined_read_back_in_order() -> None:
    first = np.frombuffer(b"aaabbbb", dtype=np.uint8)
    second = np.frombuffer(b"cc", dtype=np.uint8)
    one = PackedFrames.of(first, np.array([3, 7]), np.array([[4, 3], [8, 6]], dtype=np.int32))
    two = PackedFrames.of(second, np.array([2]), np.array([[2, 2]], dtype=np.int32))
    batch = PackedFrames.joined([one, two])
    assert [bytes(f.data) for f in batch] == [b"aaa", b"bbbb", b"cc"]
    assert [(f.width, f.height) for f in batch] == [(4, 3), (8, 6), (2, 2)]
    assert [bytes(f.data) for f in batch[1:]] == [b"bbbb", b"cc"]
    lengths = (batch.ends - batch.starts).tolist()
    assert [ctypes.string_at(int(a), n) for a, n in zip(batch.addresses(), lengths)] == [b"aaa", b"bbbb", b"cc"]
