"""Who each face of a batch of detection events is: the gallery asked once per batch, not per face.

The stranger and person_seen rules both ask who a face is. The worker hands them one ``Recognition``
per batch of events: every distinct embedding of the batch matched against the gallery in one matrix
product per embedder, each face's float vector kept for the rules that compare faces with each other.
"""

from collections.abc import Callable, Iterable
from typing import NamedTuple

import numpy as np

from facestream.gallery import Gallery, as_vector
from facestream.schemas import DetectionEvent, ModelRef


class Recognised(NamedTuple):
    vector: np.ndarray  # the face's embedding as float32
    person_id: str | None  # the closest enrolled person (Gallery.best_match), or None
    similarity: float  # to that person; -1.0 when there is none


Match = Callable[[bytes, ModelRef], Recognised]  # (a face's embedding, its embedder) -> who it is


class Recognition:
    """The gallery's answer for every face with an embedding in ``events``; called as a ``Match``."""

    def __init__(self, gallery: Gallery, events: Iterable[DetectionEvent]) -> None:
        asked: dict[tuple[ModelRef, int], dict[bytes, None]] = {}  # distinct embeddings, by embedder and size
        for event in events:
            if event.embedder is not None:
                for face in event.faces:
                    if face.embedding is not None:
                        asked.setdefault((event.embedder, len(face.embedding)), {})[face.embedding] = None
        self._found: dict[ModelRef, dict[bytes, Recognised]] = {}
        for (embedder, size), embeddings in asked.items():
            vectors = as_vector(b"".join(embeddings)).reshape(len(embeddings), size // 2)
            found = self._found.setdefault(embedder, {})
            answers = gallery.best_matches(vectors, embedder)
            for embedding, vector, (person_id, similarity) in zip(embeddings, vectors, answers, strict=True):
                found[embedding] = Recognised(vector, person_id, similarity)

    def __call__(self, embedding: bytes, embedder: ModelRef) -> Recognised:
        return self._found[embedder][embedding]
