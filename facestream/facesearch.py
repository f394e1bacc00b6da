"""Search by face across the sightings the alert store keeps (``alert-store --sightings``).

The database is the truth and the index a copy held where searches are served (the dashboard): it is
filled from the sightings table at start, then follows it by id before every search (rows are kept
in id order). Retention deletes rows the index may still hold, so every answer is read back from the
table, and keys whose rows are gone are dropped from the index then; the oldest kept id also tells
the index which keys retention took. A search finds the sightings at least ``min_similarity`` alike,
then groups them into visits: consecutive sightings on one camera, no more than ``VISIT_GAP_S`` apart.
"""

import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from sqlalchemy import Engine

from facestream.alertdb import sightings
from facestream.alertdb.sightings import Seen
from facestream.config import parse_duration
from facestream.faceindex import FaceIndex

# SFace's default match threshold, where bench/results/threshold-sface.json measured no false matches
# among 2,450 pairs of two people's photos (docs/search.md)
MIN_SIMILARITY = 0.5
VISIT_GAP_S = 30.0  # sightings on one camera further apart than this are separate visits
LIMIT = 1000  # sightings a search returns at most, the most alike first


def since_ns(text: str, now_ns: int | None = None) -> int:
    """The start of a search's period from a duration (``24h``, ``90m``, ``7d``: that long ago) or Unix
    milliseconds; ``""`` or ``0`` for all that is kept."""
    text = text.strip()
    if text in ("", "0"):
        return 0
    if text.isdigit():
        return int(text) * 1_000_000
    ago_s = parse_duration(text)
    return (time.time_ns() if now_ns is None else now_ns) - int(ago_s * 1e9)


@dataclass(frozen=True)
class Hit:
    sighting: Seen
    similarity: float


@dataclass(frozen=True)
class Visit:
    """Consecutive sightings of the face on one camera, newest first."""

    camera_id: str
    hits: tuple[Hit, ...]

    @property
    def first_ts_ns(self) -> int:
        return self.hits[-1].sighting.capture_ts_ns

    @property
    def last_ts_ns(self) -> int:
        return self.hits[0].sighting.capture_ts_ns

    @property
    def best(self) -> Hit:
        return max(self.hits, key=lambda hit: hit.similarity)


def visits(hits: Iterable[Hit], gap_s: float = VISIT_GAP_S) -> list[Visit]:
    """``hits`` grouped into visits, the latest visit first."""
    by_camera: dict[str, list[Hit]] = {}
    for hit in hits:
        by_camera.setdefault(hit.sighting.camera_id, []).append(hit)
    found = []
    for camera, seen in by_camera.items():
        seen.sort(key=lambda hit: hit.sighting.capture_ts_ns, reverse=True)
        run = [seen[0]]
        for hit in seen[1:]:
            if run[-1].sighting.capture_ts_ns - hit.sighting.capture_ts_ns > gap_s * 1e9:
                found.append(Visit(camera, tuple(run)))
                run = []
            run.append(hit)
        found.append(Visit(camera, tuple(run)))
    return sorted(found, key=lambda visit: visit.last_ts_ns, reverse=True)


class SightingsIndex:
    """One ``FaceIndex`` per embedder over the sightings table of ``engine``. Thread-safe."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.indexes: dict[str, FaceIndex] = {}
        self.after_id = 0  # the last sighting indexed
        self.first_id = 0  # the oldest sighting kept when last looked
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return sum(len(index) for index in self.indexes.values())

    def follow(self) -> int:
        """Index the sightings kept since the last call, forget those retention took; return how many
        were added."""
        with self._lock:
            added = self._add(sightings.since(self.engine, self.after_id))
            oldest = sightings.first_id(self.engine) or self.after_id + 1
            if oldest > self.first_id:  # retention took the ones before it
                self.first_id = oldest
                for index in self.indexes.values():
                    keys = np.asarray(index.graph.keys, np.uint64)
                    index.forget(keys[keys < oldest].tolist())
            return added

    def _add(self, kept: Iterable[sightings.Kept]) -> int:
        added = 0
        pending: dict[str, tuple[list[int], list[bytes]]] = {}  # embedder -> keys, embeddings: a page at a time
        for row in kept:
            keys, embeddings = pending.setdefault(row.embedder, ([], []))
            keys.append(row.sighting_id)
            embeddings.append(row.embedding)
            self.after_id = max(self.after_id, row.sighting_id)
            if len(keys) >= 10_000:
                added += self._flush(pending)
        return added + self._flush(pending)

    def _flush(self, pending: dict[str, tuple[list[int], list[bytes]]]) -> int:
        added = 0
        for embedder, (keys, embeddings) in pending.items():
            if keys:
                if embedder not in self.indexes:
                    self.indexes[embedder] = FaceIndex(len(embeddings[0]) // 2)  # float16 values
                self.indexes[embedder].add(keys, embeddings)
                added += len(keys)
                keys.clear()
                embeddings.clear()
        return added

    def find(
        self,
        embeddings: Sequence[bytes],
        embedder: str,
        min_similarity: float = MIN_SIMILARITY,
        since_ns: int = 0,
        limit: int = LIMIT,
    ) -> list[Hit]:
        """The sightings of faces at least ``min_similarity`` alike to one of ``embeddings`` (one face,
        or a person's several: each sighting at its best likeness), captured since ``since_ns``, the most
        alike first (at most ``limit`` per face are looked at: older ones can take the places of newer)."""
        self.follow()
        best: dict[int, float] = {}
        with self._lock:
            index = self.indexes.get(embedder)
            for embedding in embeddings:
                for key, similarity in index.within(embedding, min_similarity, limit) if index else ():
                    best[key] = max(similarity, best.get(key, similarity))
        rows = sightings.seen(self.engine, list(best))
        gone = [key for key in best if key not in rows]
        if gone:
            with self._lock:
                self.indexes[embedder].forget(gone)
        hits = [Hit(rows[key], similarity) for key, similarity in best.items() if key in rows]
        hits = [hit for hit in hits if hit.sighting.capture_ts_ns >= since_ns]
        return sorted(hits, key=lambda hit: hit.similarity, reverse=True)

    def forget(self, embeddings: Sequence[bytes], embedder: str, min_similarity: float = MIN_SIMILARITY) -> int:
        """Delete every sighting at least ``min_similarity`` alike to any of ``embeddings`` from the
        table and the index (erasure on request); return how many were."""
        forgotten = 0
        while True:  # a face seen more often than one search returns: search again until none is left
            found = sorted(hit.sighting.sighting_id for hit in self.find(embeddings, embedder, min_similarity))
            if not found:
                return forgotten
            forgotten += sightings.remove(self.engine, found)
            with self._lock:
                self.indexes[embedder].forget(found)
