"""The detector's face tracks: which faces continue a track, and which of them are embedded."""

import numpy as np

from facestream.detector_service.tracks import GAP_S, NS, Policy, Sources, Tracks

FACE = np.array([100, 100, 180, 190], np.float32)


def sources(cameras, seqs, seconds) -> Sources:
    return Sources(
        np.array(cameras, np.int64), np.array(seqs, np.int64), np.round(np.array(seconds) * NS).astype(np.int64)
    )


def step(tracks: Tracks, cameras, seqs, seconds, boxes, quality=None, frame_of=None):
    boxes = np.array(boxes, np.float32).reshape(-1, 4)
    quality = np.full(len(boxes), 0.5) if quality is None else np.array(quality, np.float64)
    frame_of = np.zeros(len(boxes), np.int64) if frame_of is None else np.array(frame_of, np.int64)
    return tracks.follow(sources(cameras, seqs, seconds), boxes, quality, frame_of)


def test_a_face_moving_a_little_keeps_its_track_and_is_embedded_once_until_due() -> None:
    tracks = Tracks(Policy(refresh_s=1.0, better_by=0.2, first=2))
    made = [step(tracks, [0], [n], [n / 10], [FACE + 3 * n]) for n in range(15)]
    ids = {int(found[0][0]) for found in made}
    assert len(ids) == 1
    # started, its second face (the first two vote on who it is), then 1 s after the last
    assert [n for n, (_, embed) in enumerate(made) if embed[0]] == [0, 1, 11]


def test_a_markedly_better_or_worse_face_is_embedded_a_slightly_different_one_not() -> None:
    tracks = Tracks(Policy(refresh_s=60, better_by=0.2, first=1))
    qualities = [0.55, 0.65, 0.78, 0.85, 1.0, 0.9, 0.7]
    embedded = [bool(step(tracks, [0], [n], [n / 10], [FACE], [q])[1][0]) for n, q in enumerate(qualities)]
    # 0.55, then 0.78 (0.23 over), then 1.0 (0.22 over), then 0.7 (0.3 under: half hidden, say)
    assert embedded == [True, False, True, False, True, False, True]


def test_a_track_near_the_quality_gate_embeds_every_face_over_it_until_one_is_well_over() -> None:
    """Downstream only faces over the gate (0.3) vote on who a track is: until one well over it (the gate
    plus better_by) has been embedded, each face over the gate is, as with every face embedded."""
    tracks = Tracks(Policy(refresh_s=60, better_by=0.2, first=1))
    qualities = [0.2, 0.29, 0.31, 0.32, 0.28, 0.33, 0.5, 0.52, 0.45]
    embedded = [bool(step(tracks, [0], [n], [n / 10], [FACE], [q])[1][0]) for n, q in enumerate(qualities)]
    assert embedded == [True, False, True, True, False, True, True, False, False]


def test_every_frame_embeds_every_face_and_still_names_tracks() -> None:
    tracks = Tracks(Policy(every_frame=True))
    made = [step(tracks, [0], [n], [n / 10], [FACE]) for n in range(5)]
    assert all(embed[0] for _, embed in made) and len({int(ids[0]) for ids, _ in made}) == 1


def test_a_gap_a_replay_and_a_jump_each_start_a_new_embedded_track() -> None:
    tracks = Tracks(Policy(refresh_s=60, first=1))
    first, _ = step(tracks, [0], [1], [0.0], [FACE])
    after_gap, embed = step(tracks, [0], [2], [GAP_S + 0.1], [FACE])
    assert after_gap[0] != first[0] and embed[0]
    replayed, embed = step(tracks, [0], [2], [GAP_S + 0.2], [FACE])  # frame_seq not past the last
    assert replayed[0] != after_gap[0] and embed[0]
    jumped, embed = step(tracks, [0], [3], [GAP_S + 0.3], [FACE + 200])  # nowhere near the last box
    assert jumped[0] != replayed[0] and embed[0]


def test_cameras_never_share_tracks_even_with_the_same_box() -> None:
    tracks = Tracks(Policy(refresh_s=60, first=1))
    ids, embed = step(tracks, [0, 1], [1, 1], [0, 0], [FACE, FACE], frame_of=[0, 1])
    assert ids[0] != ids[1] and embed.all()
    again, embed = step(tracks, [0, 1], [2, 2], [0.1, 0.1], [FACE, FACE], frame_of=[0, 1])
    assert list(again) == list(ids) and not embed.any()


def test_faces_crossing_are_embedded_while_in_doubt() -> None:
    """Two faces walking towards each other: carried while apart, embedded while their boxes overlap
    more than one track (a swap there must not carry one person's identity to the other)."""
    tracks = Tracks(Policy(refresh_s=60, first=1))
    doubted = []
    for n in range(12):
        left, right = FACE + [8 * n, 0, 8 * n, 0], FACE + [200 - 8 * n, 0, 200 - 8 * n, 0]
        _, embed = step(tracks, [0], [n], [n / 10], [left, right], frame_of=[0, 0])
        doubted.append(bool(embed.all()))
    assert doubted[0] and not any(doubted[1:5]) and all(doubted[9:])


def test_several_frames_of_one_camera_in_a_batch_are_followed_in_order() -> None:
    tracks = Tracks(Policy(refresh_s=60, first=1))
    boxes = [FACE + 4 * n for n in range(4)]
    # Frames given out of order in the batch: followed by frame_seq, one round per frame of the camera.
    ids, embed = step(
        tracks,
        [0, 0, 0, 0],
        [3, 1, 2, 4],
        [0.3, 0.1, 0.2, 0.4],
        [boxes[2], boxes[0], boxes[1], boxes[3]],
        frame_of=[0, 1, 2, 3],
    )
    assert len(set(ids.tolist())) == 1 and embed.tolist() == [False, True, False, False]


def test_two_processes_give_different_ids() -> None:
    a, b = Tracks(Policy()), Tracks(Policy())
    assert step(a, [0], [1], [0], [FACE])[0][0] != step(b, [0], [1], [0], [FACE])[0][0]
