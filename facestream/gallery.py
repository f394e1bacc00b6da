"""The gallery of enrolled people, as every reader of the compacted topic ``faces.gallery`` sees it.

No database: the topic is the gallery. A reader applies its records in order (a later entry for a
person replaces the earlier one, a tombstone removes the person), so every alerting replica holds the
same people and follows enrolments and removals as they are published.

Teaching from an alert (the dashboard) adds faces to a person (``taught``) or, for a wrong match, adds
them as the person's negatives (``not_them``); both name the alert as their source, so ``untaught``
takes them out again. A face at least as close to one of a person's negatives as to the person is not
that person: matching then moves on to the next best person.
"""

import logging
import os
import signal
import threading
import time
from dataclasses import replace

import numpy as np

from facestream import kafka_access, kafka_clients, kafka_reading, kafka_topics
from facestream.errors import BrokerError
from facestream.schemas import (
    GALLERY_TOPIC,
    GalleryEntry,
    ModelRef,
    SchemaError,
    person_id_for,
    unpack_gallery_entry,
)
from facestream.schemas.gallery import EMBEDDINGS_MAX

log = logging.getLogger(__name__)
ALERT_SOURCE = "alert:"  # a taught face's source: this, then the alert's id


def as_vector(embedding: bytes) -> np.ndarray:
    """A face's or an entry's float16 bytes as a float32 vector."""
    return np.frombuffer(embedding, "<f2").astype(np.float32)


class Gallery:
    """Enrolled people by person id, and the best match of a face among them."""

    def __init__(self) -> None:
        self._entries: dict[str, GalleryEntry] = {}
        self._lock = threading.Lock()
        self.changes = 0  # records applied: a reader can tell the gallery changed
        # Per change: (embedder, every enrolled face and negative as rows, row -> person id, row is a negative)
        self._matrix: tuple[ModelRef | None, np.ndarray, list[str], np.ndarray] | None = None

    def apply(self, key: bytes | None, value: bytes | None) -> None:
        """One record of the topic: an entry, or a tombstone (no value) that removes ``key``."""
        person_id = (key or b"").decode(errors="replace")
        with self._lock:
            self._matrix = None
            self.changes += 1
            if value is None:
                self._entries.pop(person_id, None)
                return
            try:
                entry = unpack_gallery_entry(value)
            except SchemaError as exc:
                log.warning("ignoring an unreadable gallery record for %r: %s", person_id, exc)
                return
            self._entries[entry.person_id] = entry

    def entries(self) -> list[GalleryEntry]:
        with self._lock:
            return sorted(self._entries.values(), key=lambda e: e.person_id)

    def watched_name(self, person_id: str) -> str | None:
        """The person's name if they are on the watchlist, else None."""
        with self._lock:
            entry = self._entries.get(person_id)
        return entry.name if entry is not None and entry.watched else None

    def entry(self, person_id: str) -> GalleryEntry | None:
        with self._lock:
            return self._entries.get(person_id)

    def best_match(self, vector: np.ndarray, embedder: ModelRef) -> tuple[str | None, float]:
        """(person id, cosine similarity) of the enrolled face closest to ``vector``, among entries made
        by the same ``embedder`` (vectors of different models do not compare), passing over people one
        of whose negatives is at least as close; (None, -1.0) if nobody is left."""
        return self.best_matches(vector[np.newaxis], embedder)[0]

    def best_matches(self, vectors: np.ndarray, embedder: ModelRef) -> list[tuple[str | None, float]]:
        """``best_match`` of each row of ``vectors`` (faces made by ``embedder``), with one matrix
        product for them all: the alerting worker asks once per batch of events, not once per face."""
        with self._lock:
            if self._matrix is None or self._matrix[0] != embedder:
                self._matrix = (embedder, *self._rows(embedder, vectors.shape[1]))
            _, matrix, people, negative = self._matrix
        if not people:
            return [(None, -1.0)] * len(vectors)
        similarities = vectors @ matrix.T  # faces x enrolled rows
        if negative.any():
            similarities = np.where(_turned_away(similarities, people, negative), -np.inf, similarities)
        best = similarities.argmax(axis=1)
        top = similarities[np.arange(len(vectors)), best]
        return [
            (people[j], s) if s > -np.inf else (None, -1.0) for j, s in zip(best.tolist(), top.tolist(), strict=True)
        ]

    def _rows(self, embedder: ModelRef, size: int) -> tuple[np.ndarray, list[str], np.ndarray]:
        rows = [
            (e.person_id, v, is_negative)
            for e in self._entries.values()
            if e.embedder == embedder
            for vectors, is_negative in ((e.embeddings, False), (e.negatives, True))
            for v in vectors
        ]
        matrix = np.stack([as_vector(v) for _, v, _ in rows]) if rows else np.zeros((0, size), np.float32)
        return matrix, [person for person, _, _ in rows], np.array([n for _, _, n in rows], dtype=bool)


def _turned_away(similarities: np.ndarray, people: list[str], negative: np.ndarray) -> np.ndarray:
    """Which (face, row) pairs cannot match: the row is a negative, or one of its person's negatives is
    at least as close to the face."""
    owner = np.array(people)
    away = np.broadcast_to(negative, similarities.shape).copy()
    for k in np.flatnonzero(negative):
        same = owner == owner[k]  # the rows of the negative's person
        away |= same & (similarities <= similarities[:, k : k + 1])
    return away


def source_of(alert_id: str) -> str:
    """How faces taught from an alert name it."""
    return f"{ALERT_SOURCE}{alert_id}"


def alert_of(source: str) -> str | None:
    """The alert a taught face names as its source, or None (a photo's name)."""
    return source.removeprefix(ALERT_SOURCE) if source.startswith(ALERT_SOURCE) else None


def taught(
    entry: GalleryEntry | None, name: str, embedder: ModelRef, faces: list[bytes], alert_id: str
) -> GalleryEntry:
    """``entry`` (or a new person called ``name``) with ``faces`` from an alert added."""
    return with_faces(entry, name, embedder, faces, [source_of(alert_id)] * len(faces))


def with_faces(
    entry: GalleryEntry | None, name: str, embedder: ModelRef, faces: list[bytes], sources: list[str]
) -> GalleryEntry:
    """``entry`` (or a new person called ``name``) with ``faces`` added, each named by its source (a
    photo's name, an alert); the oldest faces make room when it would hold more than a person may."""
    if entry is None:
        entry = GalleryEntry(person_id_for(name), name, embedder, (), time.time_ns(), ())
    elif entry.embedder != embedder:
        raise ValueError(
            f"{entry.name} was enrolled with {entry.embedder.name} {entry.embedder.version}; these faces "
            f"come from {embedder.name} {embedder.version}, which do not compare"
        )
    embeddings = (*entry.embeddings, *faces)[-EMBEDDINGS_MAX:]
    images = (*entry.images, *sources)[-EMBEDDINGS_MAX:]
    return replace(entry, embeddings=embeddings, images=images)


def not_them(entry: GalleryEntry, faces: list[bytes], alert_id: str) -> GalleryEntry:
    """``entry`` with ``faces`` from an alert as negatives: they resembled the person and are not them."""
    source = source_of(alert_id)
    negatives = (*entry.negatives, *faces)[-EMBEDDINGS_MAX:]
    sources = (*entry.negative_sources, *[source] * len(faces))[-EMBEDDINGS_MAX:]
    return replace(entry, negatives=negatives, negative_sources=sources)


def untaught(entry: GalleryEntry, alert_id: str) -> GalleryEntry | None:
    """``entry`` without what was taught from an alert (faces and negatives); None if no face is left."""
    source = source_of(alert_id)
    kept = [(v, i) for v, i in zip(entry.embeddings, entry.images, strict=True) if i != source]
    negatives = [(v, s) for v, s in zip(entry.negatives, entry.negative_sources, strict=True) if s != source]
    if not kept:
        return None
    return replace(
        entry,
        embeddings=tuple(v for v, _ in kept),
        images=tuple(i for _, i in kept),
        negatives=tuple(v for v, _ in negatives),
        negative_sources=tuple(s for _, s in negatives),
    )


def undo(gallery: Gallery, alert_id: str) -> dict[str, GalleryEntry | None]:
    """person id -> their entry without what an alert taught (None: no face is left, remove them), for
    every person it taught; empty if it taught nothing."""
    source = source_of(alert_id)
    return {
        entry.person_id: untaught(entry, alert_id)
        for entry in gallery.entries()
        if source in entry.images or source in entry.negative_sources
    }


def publish(topic: str, person_id: str, value: bytes | None, bootstrap: str | None = None) -> None:
    """Write one gallery record (an entry, or a tombstone) and wait for the broker to take it."""
    kafka_topics.ensure_topics({topic: 1}, bootstrap, configs={topic: kafka_topics.COMPACTED})
    producer = kafka_clients.producer("facestream-gallery", bootstrap)
    failed = []
    kafka_clients.send(producer, topic, value, person_id.encode(), on_delivery=lambda err, _msg: failed.append(err))
    if kafka_clients.flush(producer, topic, 30.0):
        raise BrokerError(f"the broker did not acknowledge the gallery record for {person_id} within 30 s")
    if failed[0] is not None:
        kafka_access.check_allowed(failed[0], f"write {topic}")
        raise BrokerError(f"the broker refused the gallery record for {person_id}: {failed[0].str()}")


def load(bootstrap: str | None = None, topic: str = GALLERY_TOPIC) -> Gallery:
    """The gallery as the topic holds it now."""
    gallery = Gallery()
    for msg in kafka_reading.read_to_end(topic, bootstrap):
        gallery.apply(msg.key(), msg.value())
    return gallery


class Follower:
    """Keeps a Gallery current from the topic in a thread of its own: loaded to the topic's end when
    made, then every later enrolment or removal as it is published. The thread reads the topic from
    its start again (records apply idempotently), so nothing published while it joins is missed."""

    def __init__(self, bootstrap: str | None = None, topic: str = GALLERY_TOPIC) -> None:
        self.gallery = load(bootstrap, topic)
        self._stop = threading.Event()
        self.failed: BrokerError | None = None  # why the thread stopped following, if it did
        self._records = kafka_reading.records(topic, self._stop.is_set, from_beginning=True, bootstrap=bootstrap)
        self._thread = threading.Thread(target=self._follow, name="gallery", daemon=True)

    def start(self) -> "Follower":
        self._thread.start()
        return self

    def _follow(self) -> None:
        try:
            for msg in self._records:
                self.gallery.apply(msg.key(), msg.value())
                log.info(
                    "gallery: %s %s", "removed" if msg.value() is None else "enrolled", (msg.key() or b"").decode()
                )
        except BrokerError as exc:  # e.g. refused by the ACLs: matching on a gallery frozen in time would be silent
            self.failed = exc
            log.error("the gallery cannot be followed, stopping: %s", exc)
            os.kill(os.getpid(), signal.SIGTERM)  # the process's own way to stop, as an orchestrator would

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
