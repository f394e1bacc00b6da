"""Faces followed on one camera: each face of a detection event continues or starts a track
(``tracking.follow``), by place and, where the face carries an embedding, by who it looks like. Even
the embedding of a small or blurred face tells two people in one picture apart well enough: the
quality gate (``facestream.face_quality``) is for deciding who someone is, not for following them.

A track is named by the event and face that started it (``<event_id>#<index>``): unique across
cameras, and the same again when the events are replayed from the same state, as the camera's state
in the alerting table is after a worker takes the camera over.
"""

import math
from dataclasses import dataclass

import numpy as np

from facestream.alerting.rules import tracking
from facestream.alerting.rules.recognition import Match
from facestream.alerting.rules.state import seconds
from facestream.config import check, setting
from facestream.schemas import DetectionEvent


@dataclass(frozen=True)
class FaceTrackSettings:
    follow: bool = setting(True, "Follow faces from frame to frame on cameras that run stranger or person_seen.")
    rate_hz: float = setting(
        5.0,
        "Frames a second of each camera the faces are followed in, at most; faces of the frames between name no "
        "track (5 follows as well as 30, bench tracks, at a sixth of the work).",
        minimum=0.1,
    )
    high_score: float = setting(
        0.7, "Detection score from which a face starts a track; fainter faces only continue one.", minimum=0, maximum=1
    )
    max_distance: float = setting(1.0, "How far a face may move between frames, in its box's longer side.", minimum=0)
    min_similarity: float = setting(
        0.2, "Cosine similarity under which two faces never continue each other's track.", minimum=-1, maximum=1
    )
    reidentify: float = setting(
        0.45, "Cosine similarity from which a face continues a track wherever it reappears.", minimum=-1, maximum=1
    )
    lost_after_s: float = setting(
        3.0, "Seconds unseen after which a track ends: a face seen later starts a new visit.", minimum=0
    )

    def __post_init__(self) -> None:
        check(self)

    def how(self) -> tracking.Follow:
        """The tracker's settings."""
        return tracking.Follow(
            self.max_distance, self.lost_after_s, self.high_score, self.min_similarity, self.reidentify
        )


def follow_faces(
    state: dict, event: DetectionEvent, match: Match, settings: FaceTrackSettings, lent: tuple[int, ...] = ()
) -> tuple[list[str | None], list[dict]] | None:
    """Update ``state`` (a camera's face tracks, changed in place) with ``event``; return each face's
    track name (None for a faint face that continues no track) and the tracks that ended; or None for a
    frame that comes sooner than ``rate_hz`` allows after the last one followed (it changes nothing).
    A face in ``lent`` (its detector track's embedding lent to it: the detector was sure it continues
    its track) continues the track its detector track's last face was given here, when that track lives."""
    now = seconds(event)
    if now - state.get("at", -math.inf) < 1 / settings.rate_hz - 1e-6:
        return None
    state["at"] = now
    embedder = event.embedder
    # A lent embedding is its track's, not this face's look: it adds nothing to the track's vector.
    vectors: list[np.ndarray | None] = [
        None if face.embedding is None or embedder is None or index in lent else match(face.embedding, embedder).vector
        for index, face in enumerate(event.faces)
    ]
    # detector track -> the id of the track its last face continued here
    detector: dict[str, int] = state.setdefault("detector", {})
    faces = event.faces
    found, gone = tracking.follow(
        state.setdefault("tracks", []),
        [face.box for face in faces],
        now,
        settings.how(),
        [face.score for face in faces],
        vectors,
        {i: detector[str(faces[i].track)] for i in lent if str(faces[i].track) in detector},
    )
    names: list[str | None] = []
    for index, track in enumerate(found):
        if track is not None:
            track.setdefault("first", f"{event.event_id}#{index}")
            if faces[index].track is not None:
                detector[str(faces[index].track)] = track["id"]
        names.append(None if track is None else track["first"])
    living = {track["id"] for track in state["tracks"]}
    for name in [name for name, kept in detector.items() if kept not in living]:
        del detector[name]
    return names, gone
