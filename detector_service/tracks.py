"""Faces followed per camera inside the detector, so that a face is embedded when its track needs an
embedding rather than in every frame: SFace's GPU time per face is close to YuNet's per frame, and a
person in view is the same person from one frame to the next.

Each face of a frame continues the track of its camera whose last box it overlaps most (IoU at least
``MATCH_IOU``, each track and face once, best pairs first), or starts a new one. A face is embedded:

- when its track starts (a new face has its embedding in the very frame it is first found), and for
  the track's first ``first`` faces: who a track is gets decided by a vote of its first faces
  downstream (``alerting.rules.votes``), and one poor first face must not decide it alone;
- when the match is in doubt: the face overlaps another track, or the track another face, by more
  than ``NEAR_IOU`` (two people crossing), so a swap never carries one person's identity to another,
  or its box is ``RESIZED`` against the box of the face last embedded for the track (a face going
  behind someone shows as a box that shrinks from one side, frame by frame: what is left may be the
  other person's);
- when its quality (``face_quality``: size, score, sharpness, pose) is ``better_by`` over the face
  last embedded for the track, or as much under it (a face half hidden behind another, turned away:
  its own embedding says whether it is still the one the track was), or ``refresh_s`` of capture
  time have passed since;
- when it passes the quality gate (``face_quality.GOOD``) while no face of the track embedded so far
  was ``better_by`` over the gate: downstream only faces over the gate vote on who a track is, and a
  track of faces near it must get as many votes as when every face was embedded;
- always, with ``every_frame``.

A track ends after ``GAP_S`` of its camera's capture time without a face; a camera whose frames go
back (a replay after a crash, another replica's frames) starts its tracks afresh, and so does a camera
new to this process (a partition moved here): its faces are embedded again, a cost and never a wrong
identity. Track ids start at a random 62-bit number per process and count up, so two processes
(replicas, or one restarted) do not give one camera the same id twice.

The state is a few flat arrays over every camera's live tracks, kept sorted by camera, and a batch
is followed with array operations, in rounds when a camera has several frames in it (once per frame
of it, in order): no Python per face or per frame, since it runs beside the GPU owner's decoding.
"""

import secrets
import time
from dataclasses import dataclass

import numpy as np

from facestream.face_quality import GOOD
from facestream.schemas import Frame

NS = 1_000_000_000
MATCH_IOU = 0.3  # the least overlap with a track's last box for a face to continue it
NEAR_IOU = 0.1  # overlap with a second face or track that puts a match in doubt
# A track unseen this long (capture time) has ended: the longest a face may be missing and still be
# taken for the one before it in the same place. Short, so that one person leaving and another taking
# their place is never one track: a camera at under 2 fps has every face embedded, as before tracks.
GAP_S = 0.5
RESIZED = 1.15  # a box this much wider or taller than the track's last, or narrower or shorter, is in doubt
IDLE_S = 60.0  # a camera not seen by this process this long (wall time) is forgotten: its partition went elsewhere


@dataclass(frozen=True)
class Policy:
    """When a track's face is embedded again (``facestream detect``'s --embed-* settings)."""

    refresh_s: float = 2.0
    better_by: float = 0.15
    every_frame: bool = False
    first: int = 3


@dataclass(frozen=True)
class Sources:
    """Which camera each frame of a batch comes from, its number and its capture time: what following
    faces needs of the frames. A GPU owner's frames are bytes without their messages, so its fronts
    send this beside them."""

    cameras: np.ndarray  # int64: each frame's camera, as a number this process gave it (``CameraKeys``)
    seqs: np.ndarray  # int64: frame_seq
    times: np.ndarray  # int64: capture_ts_ns

    def take(self, index) -> "Sources":
        return Sources(self.cameras[index], self.seqs[index], self.times[index])

    @classmethod
    def joined(cls, parts: "list[Sources]", prefixes: list[int]) -> "Sources":
        """Several batches' sources as one, each part's camera numbers moved to a range of its own
        (``prefix << 40``): two fronts' numbers for their cameras must not meet."""
        return cls(
            np.concatenate([p.cameras | (prefix << 40) for p, prefix in zip(parts, prefixes, strict=True)]),
            np.concatenate([p.seqs for p in parts]),
            np.concatenate([p.times for p in parts]),
        )


class CameraKeys:
    """Camera id -> a number, the same for the life of this process."""

    def __init__(self) -> None:
        self._keys: dict[str, int] = {}

    def sources(self, frames: list[Frame]) -> Sources:
        keys, count = self._keys, len(frames)
        return Sources(
            np.fromiter((keys.setdefault(f.camera_id, len(keys)) for f in frames), np.int64, count),
            np.fromiter((f.frame_seq for f in frames), np.int64, count),
            np.fromiter((f.capture_ts_ns for f in frames), np.int64, count),
        )


class Tracks:
    """Every camera's live tracks in this process; ``follow`` takes one batch's faces."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self._next_id = secrets.randbits(62) + 1
        # One row per live track, sorted by camera: its camera, last box, id, when last seen (capture
        # ns); when, where and how good its last embedded face was, the best embedded so far, how many
        # faces it has had, and when this process last saw it (wall).
        self.camera = np.zeros(0, np.int64)
        self.box = np.zeros((0, 4), np.float32)
        self.embedded_box = np.zeros((0, 4), np.float32)
        self.id = np.zeros(0, np.int64)
        self.seen = np.zeros(0, np.int64)
        self.embedded = np.zeros(0, np.int64)
        self.quality = np.zeros(0, np.float32)
        self.best = np.zeros(0, np.float32)
        self.faces = np.zeros(0, np.int64)
        self.touched = np.zeros(0, np.float64)
        # One row per camera, sorted: its last frame's number, and when this process last saw it (wall).
        self.cameras = np.zeros(0, np.int64)
        self.last_seq = np.zeros(0, np.int64)
        self.camera_touched = np.zeros(0, np.float64)

    def follow(
        self, sources: Sources, boxes: np.ndarray, quality: np.ndarray, frame_of: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Each face's track id (int64) and whether it is to be embedded (bool): ``boxes`` (F, 4) in frame
        pixels, their ``quality`` (F,), ``frame_of`` (F,) each face's frame in ``sources``."""
        ids = np.zeros(len(boxes), np.int64)
        embed = np.zeros(len(boxes), bool)
        now = time.monotonic()
        rounds = _rounds(sources)
        for number in range(int(rounds.max(initial=-1)) + 1):
            frames = np.flatnonzero(rounds == number)
            faces = np.flatnonzero(rounds[frame_of] == number)
            self._round(sources.take(frames), frames, faces, boxes, quality, frame_of, ids, embed, now)
        self._forget(now)
        return ids, embed

    def _round(self, seen: Sources, frames, faces, boxes, quality, frame_of, ids, embed, now: float) -> None:
        """One frame of each camera in ``seen`` (``frames``: their places in the batch) and its ``faces``."""
        self._end(seen)
        camera = seen.cameras[np.searchsorted(frames, frame_of[faces])]
        at = seen.times[np.searchsorted(frames, frame_of[faces])]
        pair_face, pair_track = _pairs(camera, self.camera)
        overlap = _iou(boxes[faces][pair_face], self.box[pair_track])
        doubt = _doubt(pair_face, pair_track, overlap > NEAR_IOU, len(faces), len(self.id))
        track = _greedy(pair_face, pair_track, overlap, len(faces))
        continued = track >= 0
        rows = track[continued]
        face_rows = faces[continued]
        due = (
            self.policy.every_frame
            | _resized(boxes[face_rows], self.embedded_box[rows])
            | doubt[continued]
            | (at[continued] - self.embedded[rows] >= round(self.policy.refresh_s * NS))
            | (np.abs(quality[face_rows] - self.quality[rows]) >= self.policy.better_by)
            | (self.faces[rows] < self.policy.first)
            | ((quality[face_rows] >= GOOD) & (self.best[rows] < GOOD + self.policy.better_by))
        )
        self.faces[rows] += 1
        self.box[rows] = boxes[face_rows]
        self.embedded_box[rows] = np.where(due[:, None], boxes[face_rows], self.embedded_box[rows])
        self.seen[rows] = at[continued]
        self.touched[rows] = now
        self.embedded[rows] = np.where(due, at[continued], self.embedded[rows])
        self.quality[rows] = np.where(due, quality[face_rows], self.quality[rows])
        self.best[rows] = np.where(due, np.maximum(quality[face_rows], self.best[rows]), self.best[rows])
        ids[face_rows], embed[face_rows] = self.id[rows], due
        born = faces[~continued]
        new_ids = self._next_id + np.arange(len(born), dtype=np.int64)
        self._next_id += len(born)
        ids[born], embed[born] = new_ids, True
        self._add(camera[~continued], boxes[born], new_ids, at[~continued], quality[born], now)
        self._saw_cameras(seen, now)

    def _end(self, seen: Sources) -> None:
        """Tracks of the cameras in ``seen`` that ended: unseen ``GAP_S``, or on a camera whose frames went
        back (a replay: every track of it)."""
        order = np.argsort(seen.cameras)
        cameras, times, seqs = seen.cameras[order], seen.times[order], seen.seqs[order]
        known, place = _lookup(self.cameras, cameras)
        replayed = np.zeros(len(cameras), bool)
        replayed[known] = seqs[known] <= self.last_seq[place[known]]
        here, which = _lookup(cameras, self.camera)
        if not here.any():
            return
        gap = round(GAP_S * NS)
        ended = np.zeros(len(self.id), bool)
        at = times[which[here]]
        ended[here] = replayed[which[here]] | (self.seen[here] < at - gap) | (self.seen[here] > at)
        self._keep(~ended)

    def _saw_cameras(self, seen: Sources, now: float) -> None:
        known, place = _lookup(self.cameras, seen.cameras)
        self.last_seq[place[known]] = seen.seqs[known]
        self.camera_touched[place[known]] = now
        new = ~known
        cameras = np.concatenate([self.cameras, seen.cameras[new]])
        order = np.argsort(cameras, kind="stable")
        self.cameras = cameras[order]
        self.last_seq = np.concatenate([self.last_seq, seen.seqs[new]])[order]
        self.camera_touched = np.concatenate([self.camera_touched, np.full(int(new.sum()), now)])[order]

    def _add(self, cameras, boxes, ids, seen, quality, now: float) -> None:
        self.camera = np.concatenate([self.camera, cameras])
        self.box = np.concatenate([self.box, boxes.astype(np.float32)])
        self.embedded_box = np.concatenate([self.embedded_box, boxes.astype(np.float32)])
        self.id = np.concatenate([self.id, ids])
        self.seen = np.concatenate([self.seen, seen])
        self.embedded = np.concatenate([self.embedded, seen])
        self.quality = np.concatenate([self.quality, quality.astype(np.float32)])
        self.best = np.concatenate([self.best, quality.astype(np.float32)])
        self.faces = np.concatenate([self.faces, np.ones(len(ids), np.int64)])
        self.touched = np.concatenate([self.touched, np.full(len(ids), now)])
        self._keep(np.argsort(self.camera, kind="stable"))

    def _keep(self, rows) -> None:
        """Only the tracks ``rows`` (a mask or indices, in the order to keep)."""
        self.camera, self.box, self.id = self.camera[rows], self.box[rows], self.id[rows]
        self.embedded_box = self.embedded_box[rows]
        self.seen, self.embedded = self.seen[rows], self.embedded[rows]
        self.quality, self.best, self.faces = self.quality[rows], self.best[rows], self.faces[rows]
        self.touched = self.touched[rows]

    def _forget(self, now: float) -> None:
        """Cameras (and their tracks) this process has not seen for ``IDLE_S``: their partitions moved."""
        if len(self.camera_touched) and self.camera_touched.min() < now - IDLE_S:
            kept = self.camera_touched >= now - IDLE_S
            self.cameras, self.last_seq = self.cameras[kept], self.last_seq[kept]
            self.camera_touched = self.camera_touched[kept]
        if len(self.touched) and self.touched.min() < now - IDLE_S:
            self._keep(self.touched >= now - IDLE_S)


def _rounds(sources: Sources) -> np.ndarray:
    """Each frame's round: 0 for a camera's first frame in the batch (by frame_seq), 1 for its second..."""
    order = np.lexsort((sources.seqs, sources.cameras))
    cameras = sources.cameras[order]
    starts = np.flatnonzero(np.r_[True, cameras[1:] != cameras[:-1]])
    group = np.cumsum(np.r_[True, cameras[1:] != cameras[:-1]]) - 1
    rounds = np.empty(len(order), np.int64)
    rounds[order] = np.arange(len(order)) - starts[group]
    return rounds


def _lookup(sorted_keys: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each of ``keys``: whether it is in ``sorted_keys``, and where (meaningful where it is)."""
    place = np.searchsorted(sorted_keys, keys)
    clipped = np.minimum(place, max(len(sorted_keys) - 1, 0))
    found = (place < len(sorted_keys)) & (sorted_keys[clipped] == keys) if len(sorted_keys) else place < 0
    return found, clipped


def _pairs(face_cameras: np.ndarray, track_cameras: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every (face, track) of one camera: ``track_cameras`` sorted, so each face's tracks are a run."""
    low = np.searchsorted(track_cameras, face_cameras, "left")
    count = np.searchsorted(track_cameras, face_cameras, "right") - low
    total = int(count.sum())
    faces = np.repeat(np.arange(len(face_cameras)), count)
    tracks = np.repeat(low, count) + np.arange(total) - np.repeat(np.cumsum(count) - count, count)
    return faces, tracks


def _resized(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Whether each box of ``a`` is ``RESIZED`` against its box of ``b``, in width or height."""
    ratios = np.maximum(a[:, 2:] - a[:, :2], 1e-6) / np.maximum(b[:, 2:] - b[:, :2], 1e-6)
    return ((ratios > RESIZED) | (ratios < 1 / RESIZED)).any(axis=1)


def _iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    width = np.minimum(a[:, 2], b[:, 2]) - np.maximum(a[:, 0], b[:, 0])
    height = np.minimum(a[:, 3], b[:, 3]) - np.maximum(a[:, 1], b[:, 1])
    inter = np.clip(width, 0, None) * np.clip(height, 0, None)
    union = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1]) + (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1]) - inter
    return inter / np.maximum(union, 1e-9)


def _doubt(pair_face, pair_track, near, faces: int, tracks: int) -> np.ndarray:
    """Per face: it lies near two tracks, or its nearest track near two faces."""
    face_near = np.bincount(pair_face[near], minlength=faces)
    track_near = np.bincount(pair_track[near], minlength=tracks)
    doubt = face_near > 1
    crowded = near & (track_near[pair_track] > 1)
    doubt[pair_face[crowded]] = True
    return doubt


def _greedy(pair_face, pair_track, overlap, faces: int) -> np.ndarray:
    """Each face's track (-1 for none): pairs of at least MATCH_IOU taken best first, each face and track
    once. Done as rounds of mutual best choices over one total order of the pairs, which picks what the
    one-at-a-time greedy picks, in as many rounds as there are chains of conflicts (one, mostly)."""
    track = np.full(faces, -1, np.int64)
    keep = overlap >= MATCH_IOU
    pf, pt = pair_face[keep], pair_track[keep]
    rank = np.empty(len(pf), np.int64)
    rank[np.lexsort((pt, pf, -overlap[keep]))] = np.arange(len(pf))
    while len(pf):
        best_of_face = np.full(faces, len(rank), np.int64)
        np.minimum.at(best_of_face, pf, rank)
        best_of_track = np.full(int(pt.max()) + 1, len(rank), np.int64)
        np.minimum.at(best_of_track, pt, rank)
        mutual = (best_of_face[pf] == rank) & (best_of_track[pt] == rank)
        track[pf[mutual]] = pt[mutual]
        taken_faces, taken_tracks = pf[mutual], pt[mutual]
        left = ~np.isin(pf, taken_faces) & ~np.isin(pt, taken_tracks)
        pf, pt, rank = pf[left], pt[left], rank[left]
    return track
