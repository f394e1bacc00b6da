"""The sightings' faces, searchable by face: every sighting at least so similar to a query face.

An HNSW graph (usearch) over the embeddings in float16, cosine distance, keyed by the sightings' ids in
the alert store; ``python -m bench search`` measures it against faiss and exact search. Faces compare
only with faces of the same embedder, so there is one graph per embedder. The graph answers
a range query: the sightings within ``1 - min_similarity`` of the query, best first, up to a limit.
"""

import contextlib
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from facestream.errors import ConfigError

CONNECTIVITY = 16  # links per vector (HNSW's M)
EXPANSION_ADD = 128  # candidates weighed while adding (efConstruction)
EXPANSION_SEARCH = 64  # candidates weighed while searching (efSearch; a larger limit widens it)
# Up to this many faces a search compares the query with every one (exact: a few ms here); beyond
# it, the graph answers, approximately (bench search reports its recall).
EXACT_UP_TO = 100_000


def _usearch_index():
    """usearch's ``Index``. Its wheel links its own copy of the C++ library; a process that imports
    ONNX Runtime after it crashes (usearch 2.26, onnxruntime 1.32: the dashboard embeds uploaded photos
    with ONNX Runtime), one that imports ONNX Runtime first does not: so that comes first, when installed."""
    with contextlib.suppress(ImportError):
        import onnxruntime  # noqa: F401
    try:
        from usearch.index import Index
    except ImportError:
        raise ConfigError("search by face needs usearch: pip install 'facestream[search]'") from None
    return Index


class FaceIndex:
    """The embeddings of one embedder's sightings."""

    def __init__(
        self,
        ndim: int,
        connectivity: int = CONNECTIVITY,
        expansion_add: int = EXPANSION_ADD,
        expansion_search: int = EXPANSION_SEARCH,
    ) -> None:
        Index = _usearch_index()
        self.ndim = ndim
        self.graph = Index(
            ndim=ndim,
            metric="cos",
            dtype="f16",
            connectivity=connectivity,
            expansion_add=expansion_add,
            expansion_search=expansion_search,
        )

    def __len__(self) -> int:
        return len(self.graph)

    def save(self, path: Path) -> None:
        """Write the graph to ``path`` (through a file beside it, so a crash leaves the previous copy)."""
        part = path.with_name(path.name + ".part")
        self.graph.save(str(part))
        os.replace(part, path)

    @classmethod
    def restore(cls, path: Path) -> "FaceIndex":
        """The graph ``save`` wrote to ``path``, with the settings it was made with."""
        graph = _usearch_index().restore(str(path))
        if graph is None:
            raise ConfigError(f"{path} holds no search index")
        index = cls.__new__(cls)
        index.ndim, index.graph = graph.ndim, graph
        return index

    def add(self, keys: Sequence[int], embeddings: Sequence[bytes]) -> None:
        """Index each embedding (little-endian float16 bytes, as on the wire) under its key."""
        if keys:
            self.add_vectors(keys, np.frombuffer(b"".join(embeddings), "<f2").reshape(len(keys), -1))

    def add_vectors(self, keys: Sequence[int] | np.ndarray, vectors: np.ndarray) -> None:
        """Index the rows of ``vectors`` (unit length) under ``keys``; keys already indexed are left as
        they are (a copy restored from disk may hold some that the table is followed from again)."""
        if vectors.shape[1] != self.ndim:
            raise ValueError(f"embeddings of {vectors.shape[1]} values, the index holds {self.ndim}")
        keys = np.asarray(keys, np.uint64)
        new = ~np.asarray(self.graph.contains(keys), bool) if len(self.graph) else np.ones(len(keys), bool)
        if new.any():
            self.graph.add(keys[new], vectors[new])

    def forget(self, keys: Sequence[int]) -> int:
        """Drop these keys (those not indexed are ignored); return how many were dropped."""
        present = [key for key in keys if key in self.graph]
        if present:
            self.graph.remove(np.asarray(present, np.uint64))
        return len(present)

    def within(self, embedding: bytes | np.ndarray, min_similarity: float, limit: int) -> list[tuple[int, float]]:
        """(key, cosine similarity) of the indexed faces at least ``min_similarity`` alike, best first."""
        if not len(self.graph):
            return []
        vector = np.frombuffer(embedding, "<f2") if isinstance(embedding, bytes) else np.asarray(embedding)
        exact = len(self.graph) <= EXACT_UP_TO
        matches = self.graph.search(vector.astype(np.float16), limit, radius=1.0 - min_similarity, exact=exact)
        found = [(int(key), 1.0 - float(distance)) for key, distance in zip(matches.keys, matches.distances)]
        return [(key, similarity) for key, similarity in found if similarity >= min_similarity]
