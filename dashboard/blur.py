"""Faces of people not on the watchlist, pixelated for the role viewer when the dashboard runs with
``--blur-unwatched``: an operator at the live view sees who is watched for, not every passer-by.
A face stays sharp when its embedding is at least ``--watch-threshold`` alike to a watched person's
enrolled faces (as the person_seen rule decides); a face without an embedding is pixelated."""

from collections.abc import Sequence

import numpy as np

from facestream.dashboard.pixelate import Box
from facestream.gallery import Gallery, as_vector
from facestream.schemas import Face, ModelRef


class Blur:
    """Which faces a viewer may not see, by the gallery the dashboard follows."""

    def __init__(self, gallery: Gallery, threshold: float) -> None:
        self.gallery, self.threshold = gallery, threshold

    def hidden(self, faces: Sequence[Face], embedder: ModelRef | None) -> list[Box]:
        """The boxes of ``faces`` that are not a watched person's."""
        with_vectors = [(f, f.embedding) for f in faces if f.embedding is not None]
        watched: set[int] = set()
        if with_vectors and embedder is not None:
            vectors = np.stack([as_vector(embedding) for _, embedding in with_vectors])
            matches = self.gallery.best_matches(vectors, embedder)
            for (face, _), (person_id, similarity) in zip(with_vectors, matches, strict=True):
                if person_id is not None and similarity >= self.threshold and self.gallery.watched_name(person_id):
                    watched.add(id(face))
        return [face.box for face in faces if id(face) not in watched]
