"""People followed from frame to frame on one camera, by box overlap and then by distance.

Each frame's boxes are matched greedily to the camera's tracks: pairs that overlap first (highest
intersection over union), then pairs whose centres lie within ``max_distance`` times the track's
longer box side (a person falling changes box shape and place too much for overlap alone). A box
left unmatched starts a track; a track unmatched for ``lost_after_s`` is gone.

Limits, as for any tracker this simple: two people who cross or hug can swap tracks; a person hidden
longer than ``lost_after_s`` comes back as a new track; nothing ties a track to an identity.
Tracks are plain JSON-able dicts (they live in the alerting table): ``id``, ``box``, ``seen``.
"""

import math

Box = tuple[float, float, float, float] | list[float]


def step(
    tracks: list[dict], boxes: list[Box], now: float, max_distance: float, lost_after_s: float
) -> tuple[list[dict], list[dict]]:
    """Match ``boxes`` to ``tracks`` (changed in place); return (the track of each box, the tracks gone)."""
    matched: dict[int, int] = {}  # box index -> track index
    taken: set[int] = set()
    for _, _, i, j in sorted(_candidates(tracks, boxes, max_distance)):
        if i not in matched and j not in taken:
            matched[i] = j
            taken.add(j)
    next_id = max((t["id"] for t in tracks), default=-1) + 1
    result = []
    for i, box in enumerate(boxes):
        if i in matched:
            track = tracks[matched[i]]
        else:
            track = {"id": next_id}
            next_id += 1
            tracks.append(track)
        track["box"], track["seen"] = list(box), now
        result.append(track)
    gone = [t for t in tracks if now - t["seen"] >= lost_after_s]
    tracks[:] = [t for t in tracks if now - t["seen"] < lost_after_s]
    return result, gone


def _candidates(tracks: list[dict], boxes: list[Box], max_distance: float):
    """(-overlap, distance, box index, track index) for every pair that may be the same person."""
    for i, box in enumerate(boxes):
        for j, track in enumerate(tracks):
            overlap = iou(box, track["box"])
            distance = _centre_distance(box, track["box"]) / max(_longer_side(track["box"]), 1.0)
            if overlap > 0 or distance <= max_distance:
                yield -overlap, distance, i, j


def iou(a: Box, b: Box) -> float:
    width = min(a[2], b[2]) - max(a[0], b[0])
    height = min(a[3], b[3]) - max(a[1], b[1])
    if width <= 0 or height <= 0:
        return 0.0
    inter = width * height
    return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter)


def _centre_distance(a: Box, b: Box) -> float:
    return math.dist(((a[0] + a[2]) / 2, (a[1] + a[3]) / 2), ((b[0] + b[2]) / 2, (b[1] + b[3]) / 2))


def _longer_side(box: Box) -> float:
    return max(box[2] - box[0], box[3] - box[1])
