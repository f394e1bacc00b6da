"""The tracker on its own: faces followed by place, speed and looks, as ByteTrack and BoT-SORT follow them."""

import copy

import numpy as np

from facestream.alerting.rules import tracking
from facestream.alerting.rules.tracking import Follow

FACES = Follow(max_distance=1.0, lost_after_s=3.0, high_score=0.7, min_similarity=0.2, reidentify=0.55)


def unit(*values: float) -> np.ndarray:
    vector = np.array(values, dtype=np.float32)
    return vector / np.linalg.norm(vector)


def box(x: float, y: float = 100, side: float = 40) -> list[float]:
    return [x, y, x + side, y + side]


def ids(found: list) -> list:
    return [None if t is None else t["id"] for t in found]


def test_a_fast_face_keeps_its_track_by_its_speed() -> None:
    tracks: list[dict] = []
    # a box's side a frame: consecutive boxes only touch, so only the speed says where it went
    seen = [ids(tracking.follow(tracks, [box(30 * k, side=30)], k / 10, FACES)[0]) for k in range(8)]
    assert seen == [[0]] * 8


def test_two_faces_crossing_keep_their_tracks_by_who_they_look_like() -> None:
    tracks: list[dict] = []
    ann, bob = unit(1, 0, 0), unit(0, 1, 0)
    names = []
    for k in range(11):  # they walk towards each other, 40 px a frame, and pass at k = 5
        left, right = box(100 + 40 * k), box(500 - 40 * k)
        found, _ = tracking.follow(tracks, [right, left], k / 10, FACES, [0.9, 0.9], [bob, ann])
        names.append(ids(found))
    assert all(n == [0, 1] for n in names)  # at k = 5 their boxes are one: only their looks tell them apart


def test_a_faint_face_continues_a_track_but_starts_none() -> None:
    tracks: list[dict] = []
    assert ids(tracking.follow(tracks, [box(100)], 0.0, FACES, [0.9])[0]) == [0]
    assert ids(tracking.follow(tracks, [box(104)], 0.1, FACES, [0.4])[0]) == [0]  # blurred: still the same
    assert ids(tracking.follow(tracks, [box(104), box(400)], 0.2, FACES, [0.9, 0.4])[0]) == [0, None]
    assert len(tracks) == 1


def test_a_hidden_face_back_elsewhere_is_the_same_track_until_it_was_gone_too_long() -> None:
    tracks: list[dict] = []
    ann = unit(1, 0.1, 0)
    tracking.follow(tracks, [box(100)], 0.0, FACES, [0.9], [ann])
    back, gone = tracking.follow(tracks, [box(500, 300)], 2.0, FACES, [0.9], [unit(1, 0.2, 0)])
    assert ids(back) == [0] and back[0]["hits"] == 2 and gone == []
    later, gone = tracking.follow(tracks, [box(100)], 6.0, FACES, [0.9], [ann])
    assert gone == back and later[0] is not back[0] and later[0]["hits"] == 1  # a new visit


def test_someone_else_where_a_face_was_starts_a_track_of_their_own() -> None:
    tracks: list[dict] = []
    tracking.follow(tracks, [box(100)], 0.0, FACES, [0.9], [unit(1, 0, 0)])
    found, _ = tracking.follow(tracks, [box(102)], 0.1, FACES, [0.9], [unit(0, 0, 1)])
    assert ids(found) == [1]


def test_a_replay_from_the_same_state_gives_the_same_tracks() -> None:
    frames = [([box(100 + 30 * k), box(400 - 25 * k, 120)], [0.9, 0.8 if k % 3 else 0.5]) for k in range(12)]
    start: list[dict] = []
    tracking.follow(start, [box(90)], -0.1, FACES, [0.9])
    runs = []
    for _ in range(2):
        tracks = copy.deepcopy(start)
        runs.append(
            [ids(tracking.follow(tracks, boxes, k / 10, FACES, scores)[0]) for k, (boxes, scores) in enumerate(frames)]
        )
    assert runs[0] == runs[1] and runs[0][:2] == [[0, None], [0, 1]]
