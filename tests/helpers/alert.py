"""Events and a gallery for the alert rules' unit tests (see ``pythonpath`` in pyproject): synthetic
unit vectors stand for faces (the rules only compare them), a real Gallery holds the enrolled ones,
and stick figures with a torso at a given angle stand for people's poses."""

import math

import numpy as np

from facestream.gallery import Gallery
from facestream.schemas import (
    KEYPOINT_NAMES,
    DetectionEvent,
    Face,
    GalleryEntry,
    ModelRef,
    Person,
    PoseEvent,
    event_id_for,
    pack_gallery_entry,
)

DETECTOR = ModelRef("yunet", "2023mar", "8f23")
SFACE = ModelRef("sface", "2021dec", "0ba9")


def person(seed: int) -> np.ndarray:
    """A face: a random unit vector (independent ones are nearly orthogonal in 128 dimensions)."""
    vector = np.random.default_rng(seed).standard_normal(128).astype(np.float32)
    return vector / np.linalg.norm(vector)


def face(vector: np.ndarray | None = None, side: float = 100.0, score: float = 0.95, track: int | None = None) -> Face:
    embedding = None if vector is None else vector.astype("<f2").tobytes()
    return Face(box=(10.0, 10.0, 10.0 + side, 10.0 + side), score=score, embedding=embedding, track=track)


def event(seq: int, t: float, *faces: Face, camera: str = "gate") -> DetectionEvent:
    """The event of frame ``seq`` of ``camera``, captured at ``t`` seconds (naming SFace when a face
    carries an embedding or a detector track, as a detector with an embedder does)."""
    return DetectionEvent(
        event_id=event_id_for(camera, seq, DETECTOR),
        camera_id=camera,
        frame_seq=seq,
        capture_ts_ns=int(t * 1e9),
        detect_ts_ns=int(t * 1e9) + 50_000_000,
        model=DETECTOR,
        width=640,
        height=480,
        faces=tuple(faces),
        embedder=SFACE if any(f.embedding is not None or f.track is not None for f in faces) else None,
    )


def enrolled(watched: bool = False) -> Gallery:
    """One enrolled person: person(1), Alice (on the watchlist if ``watched``); with ``watched``, also
    person(3), Bob, enrolled and not watched."""
    known = Gallery()
    entries = [GalleryEntry("alice", "Alice", SFACE, (person(1).astype("<f2").tobytes(),), 0, ("a.jpg",), watched)]
    if watched:
        entries.append(GalleryEntry("bob", "Bob", SFACE, (person(3).astype("<f2").tobytes(),), 0, ("b.jpg",)))
    for entry in entries:
        known.apply(entry.person_id.encode(), pack_gallery_entry(entry))
    return known


MOVENET = ModelRef("movenet", "multipose-lightning-fp16-1", "d448")


def body(hip_x: float, hip_y: float, angle_deg: float, torso: float = 100.0, score: float = 0.6) -> Person:
    """A person whose torso leaves the hips' midpoint at ``angle_deg`` from vertical (0: upright,
    90: lying, head to the right), ``torso`` pixels long; head and legs continue the same line."""
    ux, uy = math.sin(math.radians(angle_deg)), -math.cos(math.radians(angle_deg))  # hips -> shoulders
    px, py = -uy * 0.2 * torso, ux * 0.2 * torso  # half the shoulders' width, across the torso

    def at(along: float, across: float) -> tuple[float, float, float]:
        return (hip_x + ux * along * torso + px * across, hip_y + uy * along * torso + py * across, 0.8)

    points = {
        "nose": at(1.35, 0),
        "left_eye": at(1.45, 0.2),
        "right_eye": at(1.45, -0.2),
        "left_ear": at(1.4, 0.4),
        "right_ear": at(1.4, -0.4),
        "left_shoulder": at(1.0, 1),
        "right_shoulder": at(1.0, -1),
        "left_elbow": at(0.6, 1.3),
        "right_elbow": at(0.6, -1.3),
        "left_wrist": at(0.25, 1.3),
        "right_wrist": at(0.25, -1.3),
        "left_hip": at(0, 0.6),
        "right_hip": at(0, -0.6),
        "left_knee": at(-0.9, 0.6),
        "right_knee": at(-0.9, -0.6),
        "left_ankle": at(-1.8, 0.6),
        "right_ankle": at(-1.8, -0.6),
    }
    keypoints = tuple(points[name] for name in KEYPOINT_NAMES)
    xs, ys = [k[0] for k in keypoints], [k[1] for k in keypoints]
    return Person(box=(min(xs), min(ys), max(xs), max(ys)), score=score, keypoints=keypoints)


def poses(seq: int, t: float, *persons: Person, camera: str = "hall") -> PoseEvent:
    """The pose event of frame ``seq`` of ``camera``, captured at ``t`` seconds."""
    return PoseEvent(
        event_id=event_id_for(camera, seq, MOVENET),
        camera_id=camera,
        frame_seq=seq,
        capture_ts_ns=int(t * 1e9),
        detect_ts_ns=int(t * 1e9) + 50_000_000,
        model=MOVENET,
        width=768,
        height=576,
        persons=tuple(persons),
    )
