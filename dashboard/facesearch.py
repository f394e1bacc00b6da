"""Search by face across the sightings the alert store keeps (``alert-store --sightings``).

The database is the truth and the index a copy held where searches are served (the dashboard): it is
filled from the sightings table at start, then follows it by id before every search (rows are kept
in id order). Retention deletes rows the index may still hold, so every answer is read back from the
table, and keys whose rows are gone are dropped from the index then; the oldest kept id also tells
the index which keys retention took. A search finds the sightings at least ``min_similarity`` alike,
then groups them into visits: consecutive sightings on one camera, no more than ``VISIT_GAP_S`` apart.
"""

import hashlib
import json
import logging
import os
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from sqlalchemy import Engine

from facestream.alertdb import sightings
from facestream.alertdb.sightings import Seen
from facestream.config import parse_duration
from facestream.dashboard.faceindex import FaceIndex

log = logging.getLogger(__name__)

FOLLOW_EVERY_S = 30.0  # the index follows the table this often between searches
SAVE_EVERY_S = 300.0  # and writes its copy to disk at most this often, when it changed
STATE_FILE = "index.json"  # beside the graphs: the last sighting id they hold, and their files

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
    """One ``FaceIndex`` per embedder over the sightings table of ``engine``, kept in ``folder`` (if
    given) so that a restart loads it in seconds instead of indexing every sighting again. Thread-safe."""

    def __init__(self, engine: Engine, folder: Path | None = None) -> None:
        self.engine, self.folder = engine, folder
        self.indexes: dict[str, FaceIndex] = {}
        self.after_id = 0  # the last sighting indexed
        self.first_id = 0  # the oldest sighting kept when last looked
        self.changed = False  # since the copy in the folder was written
        self.saved_at = 0.0  # time.monotonic() of that
        self._lock = threading.Lock()  # the graphs and the ids
        self._following = threading.Lock()  # one follower at a time

    def __len__(self) -> int:
        return sum(len(index) for index in self.indexes.values())

    def follow(self, wait: bool = True) -> int:
        """Index the sightings kept since the last call, forget those retention took; return how many
        were added. Without ``wait``, nothing is done while another thread follows (a search then
        answers from what is indexed so far rather than wait for a first load)."""
        if not self._following.acquire(blocking=wait):
            return 0
        try:
            added = self._add(sightings.since(self.engine, self.after_id))
            oldest = sightings.first_id(self.engine) or self.after_id + 1
            if oldest > self.first_id:  # retention took the ones before it
                with self._lock:
                    self.first_id = oldest
                    for index in self.indexes.values():
                        keys = np.asarray(index.graph.keys, np.uint64)
                        self.changed |= index.forget(keys[keys < oldest].tolist()) > 0
            return added
        finally:
            self._following.release()

    def restore(self) -> bool:
        """Load the copy ``save`` left in the folder; False (and nothing loaded) when there is none or
        it is not of this table (holding ids the table never gave: a database made afresh)."""
        state_file = self.folder / STATE_FILE if self.folder else None
        if state_file is None or not state_file.exists():
            return False
        state = json.loads(state_file.read_text())
        if state["after_id"] > sightings.highest_id_given(self.engine):
            log.warning("the search index in %s is ahead of the sightings table: indexing afresh", self.folder)
            return False
        assert self.folder is not None  # a state file was found in it
        loaded = {name: FaceIndex.restore(self.folder / file) for name, file in state["graphs"].items()}
        with self._following, self._lock:  # not in the middle of a search's follow
            self.indexes, self.after_id = loaded, state["after_id"]
        log.info("search index loaded from %s: %d sightings, up to id %d", self.folder, len(self), self.after_id)
        return True

    def save(self) -> None:
        """Write every graph, then the last id indexed, to the folder (each through a file beside it)."""
        if self.folder is None:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        with self._lock:
            graphs = {}
            for name, index in self.indexes.items():
                graphs[name] = hashlib.sha256(name.encode()).hexdigest()[:16] + ".usearch"
                index.save(self.folder / graphs[name])
            part = self.folder / (STATE_FILE + ".part")
            part.write_text(json.dumps({"after_id": self.after_id, "graphs": graphs}))
            os.replace(part, self.folder / STATE_FILE)
            self.changed, self.saved_at = False, time.monotonic()

    def keep_up(self, every_s: float = FOLLOW_EVERY_S, stop: threading.Event | None = None) -> None:
        """Restore the saved copy (if any), then follow the table every ``every_s`` and save what changed
        at most every ``SAVE_EVERY_S``: run on a thread of its own."""
        stop = stop or threading.Event()
        try:
            self.restore()
        except Exception:  # an unreadable copy: the table still has everything
            log.exception("search index: the copy in %s cannot be loaded; indexing afresh", self.folder)
        while True:
            try:
                self.follow()
                if self.changed and time.monotonic() - self.saved_at >= SAVE_EVERY_S:
                    self.save()
            except Exception:  # the database or the disk away for a while: say so and keep trying
                log.exception("search index: following the sightings failed; trying again in %g s", every_s)
            if stop.wait(every_s):
                return

    def _add(self, kept: Iterable[sightings.Kept]) -> int:
        added, upto = 0, self.after_id
        pending: dict[str, tuple[list[int], list[bytes]]] = {}  # embedder -> keys, embeddings: a page at a time
        for row in kept:
            keys, embeddings = pending.setdefault(row.embedder, ([], []))
            keys.append(row.sighting_id)
            embeddings.append(row.embedding)
            upto = max(upto, row.sighting_id)
            if len(keys) >= 10_000:
                added += self._flush(pending, upto)
        return added + self._flush(pending, upto)

    def _flush(self, pending: dict[str, tuple[list[int], list[bytes]]], upto: int) -> int:
        """Index what is pending, every sighting up to id ``upto`` then indexed."""
        added = 0
        with self._lock:  # a page at a time: searches go on between pages
            for embedder, (keys, embeddings) in pending.items():
                if keys:
                    if embedder not in self.indexes:
                        self.indexes[embedder] = FaceIndex(len(embeddings[0]) // 2)  # float16 values
                    self.indexes[embedder].add(keys, embeddings)
                    added += len(keys)
                    keys.clear()
                    embeddings.clear()
            self.changed |= added > 0
            self.after_id = upto  # a copy saved now holds every sighting up to it
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
        self.follow(wait=False)
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
            self.follow()  # every sighting kept so far, waiting for a first load if need be
            found = sorted(hit.sighting.sighting_id for hit in self.find(embeddings, embedder, min_similarity))
            if not found:
                return forgotten
            forgotten += sightings.remove(self.engine, found)
            with self._lock:
                self.indexes[embedder].forget(found)
            self.save()  # the copy on disk must not keep an erased face either
