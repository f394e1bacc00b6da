"""A batch's arrays (boxes, scores, landmarks, embeddings, counts per frame) -> one event per frame,
built a batch at once: in the process that talks to Kafka (a front of the GPU owner, or the detector
itself), never on the GPU side."""

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from facestream.detector_service.models.base import Detections
from facestream.schemas import DetectionEvent, Face, Frame, ModelRef, Person, PoseEvent, event_id_for


@dataclass(frozen=True)
class Identity:
    """What an embedder adds to a batch's faces, in face order: the embeddings of the faces ``embedded``
    says (one row each; None: every face), each face's track and its crop's sharpness."""

    embeddings: np.ndarray | None = None
    embedded: np.ndarray | None = None
    tracks: np.ndarray | None = None
    sharpness: np.ndarray | None = None

    def of_faces(self, start: int, end: int) -> "Identity":
        """Faces ``start`` to ``end``'s part (a GPU owner answering several fronts' batches run as one)."""

        def cut(array: np.ndarray | None) -> np.ndarray | None:
            return None if array is None else array[start:end]

        rows = slice(start, end)  # the embeddings' rows: one per face, or one per embedded face
        if self.embedded is not None:
            rows = slice(int(self.embedded[:start].sum()), int(self.embedded[:end].sum()))
        embeddings = None if self.embeddings is None else self.embeddings[rows]
        return Identity(embeddings, cut(self.embedded), cut(self.tracks), cut(self.sharpness))


def build_events(
    frames: Sequence[Frame],
    faces: Detections,
    counts: np.ndarray,
    model: ModelRef,
    embedder: ModelRef | None = None,
    identity: Identity = Identity(),
) -> list[DetectionEvent]:
    """One event per frame, a batch at once: ``faces`` are every frame's faces in frame pixels, in
    frame order, ``counts`` how many each frame has (``postprocess.to_frames``); with ``embedder``, the
    faces' ``identity``: unit vectors it made for some, each face's track and sharpness."""
    # Rounded as arrays, then turned into Python floats in one call each: per-number float() and
    # round() were most of the detector's host time per frame at GPU rates.
    boxes = np.round(faces.boxes.astype(np.float64), 2).tolist()
    scores = np.round(faces.scores.astype(np.float64), 4).tolist()
    count = len(scores)
    points = (
        [None] * count
        if faces.landmarks is None
        else [tuple(map(tuple, marks)) for marks in np.round(faces.landmarks.astype(np.float64), 2).tolist()]
    )
    vectors: list[bytes | None] = [None] * count
    if identity.embeddings is not None:
        packed = [v.tobytes() for v in identity.embeddings.astype("<f2")]
        places = range(count) if identity.embedded is None else np.flatnonzero(identity.embedded).tolist()
        for place, vector in zip(places, packed, strict=True):
            vectors[place] = vector
    sharp = (
        [None] * count if identity.sharpness is None else np.round(identity.sharpness.astype(np.float64), 1).tolist()
    )
    tracks = [None] * count if identity.tracks is None else identity.tracks.tolist()
    return [
        DetectionEvent(
            **_frame_fields(frame, model),
            faces=tuple(Face(tuple(boxes[i]), scores[i], points[i], vectors[i], sharp[i], tracks[i]) for i in found),
            embedder=embedder,
        )
        for frame, found in _per_frame(frames, counts)
    ]


def _per_frame(frames: Sequence[Frame], counts: np.ndarray):
    """(frame, the indices of its found items) for each frame, the items of all frames lying in frame order."""
    ends = np.cumsum(counts).tolist()
    return [(frame, range(end - count, end)) for frame, count, end in zip(frames, counts.tolist(), ends)]


def _frame_fields(frame: Frame, model: ModelRef) -> dict:
    """What every per-frame event says of its frame, and when and by which model it was made."""
    return {
        "event_id": event_id_for(frame.camera_id, frame.frame_seq, model),
        "camera_id": frame.camera_id,
        "frame_seq": frame.frame_seq,
        "capture_ts_ns": frame.capture_ts_ns,
        "detect_ts_ns": time.time_ns(),
        "model": model,
        "width": frame.width,
        "height": frame.height,
    }


def build_pose_events(frames: list[Frame], people: Detections, counts: np.ndarray, model: ModelRef) -> list[PoseEvent]:
    """One pose event per frame, a batch at once, as ``build_events`` does for faces: ``people`` hold
    every frame's people in frame pixels, their keypoints as scored landmarks."""
    assert people.landmarks is not None and people.landmark_scores is not None  # pose models score keypoints
    boxes = np.round(people.boxes.astype(np.float64), 2).tolist()
    scores = np.clip(np.round(people.scores.astype(np.float64), 4), 0, 1).tolist()
    keypoints = np.concatenate(
        [
            np.round(people.landmarks.astype(np.float64), 2),
            np.clip(np.round(people.landmark_scores.astype(np.float64), 4), 0, 1)[..., None],
        ],
        axis=-1,
    ).tolist()
    return [
        PoseEvent(
            **_frame_fields(frame, model),
            persons=tuple(
                Person(box=tuple(boxes[i]), score=scores[i], keypoints=tuple(map(tuple, keypoints[i]))) for i in found
            ),
        )
        for frame, found in _per_frame(frames, counts)
    ]
