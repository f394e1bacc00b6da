"""Events and a gallery for the alert rules' unit tests (see ``pythonpath`` in pyproject): synthetic
unit vectors stand for faces (the rules only compare them), and a real Gallery holds the enrolled ones."""

import numpy as np

from facestream.gallery import Gallery
from facestream.schemas import DetectionEvent, Face, GalleryEntry, ModelRef, event_id_for, pack_gallery_entry

DETECTOR = ModelRef("yunet", "2023mar", "8f23")
SFACE = ModelRef("sface", "2021dec", "0ba9")


def person(seed: int) -> np.ndarray:
    """A face: a random unit vector (independent ones are nearly orthogonal in 128 dimensions)."""
    vector = np.random.default_rng(seed).standard_normal(128).astype(np.float32)
    return vector / np.linalg.norm(vector)


def face(vector: np.ndarray | None = None, side: float = 100.0, score: float = 0.95) -> Face:
    embedding = None if vector is None else vector.astype("<f2").tobytes()
    return Face(box=(10.0, 10.0, 10.0 + side, 10.0 + side), score=score, embedding=embedding)


def event(seq: int, t: float, *faces: Face, camera: str = "gate") -> DetectionEvent:
    """The event of frame ``seq`` of ``camera``, captured at ``t`` seconds."""
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
        embedder=SFACE if any(f.embedding is not None for f in faces) else None,
    )


def enrolled() -> Gallery:
    """One enrolled person: person(1)."""
    known = Gallery()
    entry = GalleryEntry("alice", "Alice", SFACE, (person(1).astype("<f2").tobytes(),), 0, ("alice.jpg",))
    known.apply(b"alice", pack_gallery_entry(entry))
    return known
