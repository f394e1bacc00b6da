"""A batch's placement as arrays: the frames that decoded, subsets renumbered, one frame's view, and the
trip to a front (pickled, as the GPU owner sends it)."""

import pickle

import numpy as np

from facestream.detector_service.decoding.placements import DecodeError, HostImages, Placed, Placements


def batch() -> Placements:
    images = HostImages([np.zeros((4, 6, 3), np.uint8), None, np.ones((8, 2, 3), np.uint8), None])
    return Placements.of([Placed(0.5, 6, 4), DecodeError("not a JPEG"), Placed(2.0, 2, 8), DecodeError("cut")], images)


def test_the_frames_that_decoded_and_why_the_others_did_not() -> None:
    placed = batch()
    assert placed.good.tolist() == [0, 2] and placed.errors == {1: "not a JPEG", 3: "cut"}
    decoded = placed.decoded()
    assert decoded.scale.tolist() == [0.5, 2.0] and decoded.sizes.tolist() == [[6, 4], [2, 8]]
    assert decoded.errors == {} and decoded.images is not None and decoded.images[1].shape == (8, 2, 3)
    assert decoded.decoded() is decoded  # nothing to leave out


def test_a_subset_is_numbered_from_zero_errors_included() -> None:
    tail = batch().take(slice(1, 4))
    assert tail.errors == {0: "not a JPEG", 2: "cut"} and tail.good.tolist() == [1]
    assert tail.sizes.tolist() == [[0, 0], [2, 8], [0, 0]]


def test_one_frame_at_a_time_as_placed_or_its_error() -> None:
    placed = batch()
    first, second = placed[0], placed[1]
    assert first == Placed(0.5, 6, 4) and first.image is not None and first.image.shape == (4, 6, 3)
    assert isinstance(second, DecodeError) and str(second) == "not a JPEG"
    assert [type(p).__name__ for p in placed] == ["Placed", "DecodeError", "Placed", "DecodeError"]


def test_equal_by_scales_sizes_and_errors_and_picklable_without_images() -> None:
    placed = batch()
    bare = Placements(placed.scale, placed.sizes, placed.errors)
    assert bare == placed and bare != placed.decoded()
    assert pickle.loads(pickle.dumps(bare)) == placed
