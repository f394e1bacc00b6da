"""Faces and people followed from frame to frame on one camera: tracks, as ByteTrack and BoT-SORT make
them, small enough to live in the alerting table.

A track keeps its last box, the velocity of its centre (pixels a second, smoothed), when it was last
seen and, for faces that carry an embedding, the running mean of its vectors. Each frame:

1. every track's box is moved to the frame's capture time at its velocity (at most ``PREDICT_S``
   ahead: a track unseen longer stays where it was last seen); the velocity follows only moves of
   boxes of about the same size;
2. boxes scoring ``high_score`` or more are matched to the tracks, best pairs first: a pair may match
   if the box overlaps the predicted box or its centre lies within ``max_distance`` times the longer
   side of the two boxes, and, where both carry vectors, they are at least ``min_similarity`` alike;
   pairs rank by overlap plus, with vectors, their similarity (two faces crossing are told apart by
   who they look like, not only by where they are);
3. the boxes under ``high_score`` are matched the same way to the tracks left, but only where they
   overlap the predicted box (ByteTrack's second pass: a blurred or half-hidden face keeps its track
   but starts none);
4. boxes still unmatched that carry a vector continue a track left over wherever it is, if they are
   ``reidentify`` alike (a face that was hidden and comes back elsewhere in the picture);
5. a box left over scoring ``high_score`` or more starts a track; a track unseen ``lost_after_s`` ends.

When as many boxes as tracks each overlap one track's predicted box by half or more and no other
track's, they simply continue them (most frames), without the passes or a look at the vectors.
Pairs are taken greedily, best first, ties in box then track order, so a replay of the same events
from the same state gives the same tracks. Tracks are plain dicts (``id``, ``box``, ``seen``,
``velocity``, ``hits`` and, with vectors, ``vector`` and ``looks``), which rules may add keys to. Limits: two people
who look alike and cross can still swap; one hidden longer than ``lost_after_s`` comes back as a new
track.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from facestream.alerting.rules.state import vector_of

Box = tuple[float, float, float, float] | list[float]
PREDICT_S = 2.0  # how far ahead a track's box is moved at its velocity
# The velocity's memory, in seconds: each move weighs elapsed / SMOOTHING_S (at most 1), so a box's
# jitter of a pixel or two counts as little at 30 fps as at 5 (divided by 1/30 s, it is a fast move).
SMOOTHING_S = 0.5
LOOKS = 30  # faces a track's vector is the mean of
OBVIOUS = 0.5  # overlap with a track's predicted box that, with no other track near, continues it


@dataclass(frozen=True)
class Follow:
    """How boxes continue tracks (see the module's steps)."""

    max_distance: float  # centre distance, in the track's longer box side, within which a box may continue it
    lost_after_s: float  # seconds unseen after which a track ends
    high_score: float = 0.0  # boxes under it only continue tracks (ByteTrack's second pass)
    min_similarity: float = -1.0  # vectors less alike than this never continue each other's track
    reidentify: float = math.inf  # vectors this alike continue a track wherever the box is


def step(
    tracks: list[dict], boxes: list[Box], now: float, max_distance: float, lost_after_s: float
) -> tuple[list[dict], list[dict]]:
    """Boxes without scores or vectors (every box continues or starts a track): ``follow`` by place alone."""
    found, gone = follow(tracks, boxes, now, Follow(max_distance, lost_after_s))
    return [track for track in found if track is not None], gone


def follow(
    tracks: list[dict],
    boxes: Sequence[Box],
    now: float,
    how: Follow,
    scores: Sequence[float] | None = None,
    vectors: Sequence[np.ndarray | None] | None = None,
    known: dict[int, int] | None = None,
) -> tuple[list[dict | None], list[dict]]:
    """Match ``boxes`` (with their ``scores`` and unit ``vectors``, where given) to ``tracks`` (changed
    in place) at capture time ``now``; return (the track of each box, or None for a low-scoring box that
    continues none; the tracks that ended). ``known``: box -> the id of the track it continues, where
    that is known already (the detector followed it); the others are matched to the tracks left."""
    gone = [t for t in tracks if now - t["seen"] >= how.lost_after_s]  # ended before this frame: never continued
    tracks[:] = [t for t in tracks if now - t["seen"] < how.lost_after_s]
    count = len(boxes)
    scores = [1.0] * count if scores is None else scores
    vectors = [None] * count if vectors is None else vectors
    predicted = [_predicted(track, now) for track in tracks]
    place = {track["id"]: j for j, track in enumerate(tracks)}
    given = {i: place[known_id] for i, known_id in (known or {}).items() if known_id in place}
    claimed = list(given.values())
    given = {i: j for i, j in given.items() if claimed.count(j) == 1}  # two boxes on one track: the passes decide
    matched = None if given else _obvious(boxes, predicted, vectors, tracks, how.min_similarity)
    if matched is None:  # someone new, someone gone, or boxes near more than one track: the full passes
        matched = given  # box -> track
        strong = [i for i in range(count) if scores[i] >= how.high_score and i not in given]
        weak = [i for i in range(count) if scores[i] < how.high_score and i not in given]
        _match(matched, _nearby(strong, boxes, vectors, tracks, predicted, how, faint=False))
        _match(matched, _nearby(weak, boxes, vectors, tracks, predicted, how, faint=True))
        _match(matched, _alike([i for i in strong if i not in matched], vectors, tracks, matched, how.reidentify))
    next_id = -1  # found when a track starts: most frames start none
    found: list[dict | None] = []
    for i, box in enumerate(boxes):
        if i in matched:
            track = tracks[matched[i]]
            _moved(track, box, now)
        elif scores[i] >= how.high_score:
            if next_id < 0:
                next_id = max((t["id"] for t in tracks), default=-1) + 1
            track = {"id": next_id, "box": list(box), "seen": now, "velocity": [0.0, 0.0], "hits": 0}
            next_id += 1
            tracks.append(track)
        else:
            found.append(None)
            continue
        track["hits"] = track.get("hits", 0) + 1  # a state written before hits were counted has none
        vector = vectors[i]
        if vector is not None:
            _looked_like(track, vector)
        found.append(track)
    return found, gone


def _obvious(
    boxes: Sequence[Box],
    predicted: list[Box],
    vectors: Sequence[np.ndarray | None],
    tracks: list[dict],
    min_similarity: float,
) -> dict[int, int] | None:
    """Box -> track when nothing is in doubt, as on most frames: as many boxes as tracks, each box
    overlapping the predicted box of one track by ``OBVIOUS`` or more and no other track's at all,
    and not unlike it. None otherwise. Cheap: the full passes cost more than all of a camera's rules."""
    if len(boxes) != len(predicted):
        return None
    matched: dict[int, int] = {}
    for i, box in enumerate(boxes):
        overlaps = [iou(box, guess) for guess in predicted]
        near = [j for j, overlap in enumerate(overlaps) if overlap > 0]
        if len(near) != 1 or near[0] in matched.values() or overlaps[near[0]] < OBVIOUS:
            return None
        vector, track = vectors[i], tracks[near[0]]
        if vector is not None and "vector" in track and float(np.dot(vector, vector_of(track))) < min_similarity:
            return None
        matched[i] = near[0]
    return matched


def _match(matched: dict[int, int], pairs: list[tuple[float, int, int]]) -> None:
    """Take ``pairs`` (rank, box, track), best first, each box and track once."""
    taken = set(matched.values())
    for _, i, j in sorted(pairs):
        if i not in matched and j not in taken:
            matched[i] = j
            taken.add(j)


def _nearby(
    candidates: list[int],
    boxes: Sequence[Box],
    vectors: Sequence[np.ndarray | None],
    tracks: list[dict],
    predicted: list[Box],
    how: Follow,
    faint: bool,
) -> list[tuple[float, int, int]]:
    """(rank, box, track) for every pair near enough in place and, where both have vectors, alike
    enough. A ``faint`` box must overlap the track's predicted box: a face that is hard to see and not
    where the track goes is more likely someone else coming into view."""
    pairs = []
    for i in candidates:
        for j, track in enumerate(tracks):
            guess = predicted[j]
            overlap = iou(boxes[i], guess)
            # in the larger box's side: a face coming out from behind someone grows as it moves
            distance = _centre_distance(boxes[i], guess) / max(_longer_side(guess), _longer_side(boxes[i]), 1.0)
            if overlap <= 0 and (faint or distance > how.max_distance):
                continue
            rank = -overlap + distance / 1000  # overlap first; among boxes that overlap nothing, the nearest
            vector = vectors[i]
            if vector is not None and "vector" in track:
                similarity = float(np.dot(vector, vector_of(track)))
                if similarity < how.min_similarity:
                    continue
                rank -= similarity
            pairs.append((rank, i, j))
    return pairs


def _alike(
    candidates: list[int],
    vectors: Sequence[np.ndarray | None],
    tracks: list[dict],
    matched: dict[int, int],
    threshold: float,
) -> list[tuple[float, int, int]]:
    """(rank, box, track) for boxes and tracks left over that look ``threshold`` alike, wherever they are."""
    taken = set(matched.values())
    pairs = []
    for i in candidates:
        vector = vectors[i]
        if vector is None:
            continue
        for j, track in enumerate(tracks):
            if j in taken or "vector" not in track:
                continue
            similarity = float(np.dot(vector, vector_of(track)))
            if similarity >= threshold:
                pairs.append((-similarity, i, j))
    return pairs


def _predicted(track: dict, now: float) -> Box:
    """The track's box moved at its velocity to ``now`` (at most ``PREDICT_S`` ahead)."""
    ahead = min(max(now - track["seen"], 0.0), PREDICT_S)
    vx, vy = track.get("velocity", (0.0, 0.0))
    x0, y0, x1, y1 = track["box"]
    return (x0 + vx * ahead, y0 + vy * ahead, x1 + vx * ahead, y1 + vy * ahead)


def _moved(track: dict, box: Box, now: float) -> None:
    """The track's box is now ``box``: its velocity follows the move (smoothed), unless the box changed
    size a lot (a face half hidden, or coming out from behind someone, moves its box's centre without
    moving)."""
    elapsed = now - track["seen"]
    if 0 < elapsed <= PREDICT_S and _alike_in_size(track["box"], box):
        (ox, oy), (nx, ny) = _centre(track["box"]), _centre(box)
        vx, vy = track.get("velocity", (0.0, 0.0))
        weight = min(elapsed / SMOOTHING_S, 1.0)
        track["velocity"] = [
            (1 - weight) * vx + weight * (nx - ox) / elapsed,
            (1 - weight) * vy + weight * (ny - oy) / elapsed,
        ]
    elif elapsed > PREDICT_S:  # back after a while: where it went meanwhile says nothing of its speed now
        track["velocity"] = [0.0, 0.0]
    track["box"], track["seen"] = list(box), now


def _looked_like(track: dict, vector: np.ndarray) -> None:
    """The track's vector moves towards ``vector``: the normalised mean of its first ``LOOKS`` faces
    (later ones would move it by a hair, at the price of array arithmetic on every frame)."""
    if "vector" not in track:
        track["vector"], track["looks"] = np.asarray(vector, dtype=np.float32).copy(), 1
        return
    looks = track.get("looks", 1)
    if looks >= LOOKS:
        return
    mean = vector_of(track) * looks + vector
    track["vector"] = (mean / max(float(np.linalg.norm(mean)), 1e-12)).astype(np.float32)
    track["looks"] = looks + 1


def _alike_in_size(a: Box, b: Box) -> bool:
    """Neither box's sides more than a quarter longer than the other's."""
    width, height = (b[2] - b[0]) / max(a[2] - a[0], 1e-9), (b[3] - b[1]) / max(a[3] - a[1], 1e-9)
    return 0.8 <= width <= 1.25 and 0.8 <= height <= 1.25


def iou(a: Box, b: Box) -> float:
    width = min(a[2], b[2]) - max(a[0], b[0])
    height = min(a[3], b[3]) - max(a[1], b[1])
    if width <= 0 or height <= 0:
        return 0.0
    inter = width * height
    return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter)


def _centre(box: Box) -> tuple[float, float]:
    return (box[0] + box[2]) / 2, (box[1] + box[3]) / 2


def _centre_distance(a: Box, b: Box) -> float:
    return math.dist(_centre(a), _centre(b))


def _longer_side(box: Box) -> float:
    return max(box[2] - box[0], box[3] - box[1])
