"""The gallery of enrolled people, as every reader of the compacted topic ``faces.gallery`` sees it.

No database: the topic is the gallery. A reader applies its records in order (a later entry for a
person replaces the earlier one, a tombstone removes the person), so every alerting replica holds the
same people and follows enrolments and removals as they are published.
"""

import logging
import os
import signal
import threading

import numpy as np

from facestream import kafka_clients
from facestream.errors import BrokerError
from facestream.schemas import GALLERY_TOPIC, GalleryEntry, ModelRef, SchemaError, unpack_gallery_entry

log = logging.getLogger(__name__)


def as_vector(embedding: bytes) -> np.ndarray:
    """A face's or an entry's float16 bytes as a float32 vector."""
    return np.frombuffer(embedding, "<f2").astype(np.float32)


class Gallery:
    """Enrolled people by person id, and the best match of a face among them."""

    def __init__(self) -> None:
        self._entries: dict[str, GalleryEntry] = {}
        self._lock = threading.Lock()
        self._matrix: tuple[ModelRef | None, np.ndarray, list[str]] | None = None  # cached per change

    def apply(self, key: bytes | None, value: bytes | None) -> None:
        """One record of the topic: an entry, or a tombstone (no value) that removes ``key``."""
        person_id = (key or b"").decode(errors="replace")
        with self._lock:
            self._matrix = None
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

    def best_match(self, vector: np.ndarray, embedder: ModelRef) -> tuple[str | None, float]:
        """(person id, cosine similarity) of the enrolled face closest to ``vector``, among entries made
        by the same ``embedder`` (vectors of different models do not compare); (None, -1.0) if none."""
        with self._lock:
            if self._matrix is None or self._matrix[0] != embedder:
                rows = [
                    (e.person_id, v) for e in self._entries.values() if e.embedder == embedder for v in e.embeddings
                ]
                matrix = np.stack([as_vector(v) for _, v in rows]) if rows else np.zeros((0, len(vector)), np.float32)
                self._matrix = (embedder, matrix, [person for person, _ in rows])
            _, matrix, people = self._matrix
        if not people:
            return None, -1.0
        similarities = matrix @ vector
        best = int(np.argmax(similarities))
        return people[best], float(similarities[best])


def load(bootstrap: str | None = None, topic: str = GALLERY_TOPIC) -> Gallery:
    """The gallery as the topic holds it now."""
    gallery = Gallery()
    for msg in kafka_clients.read_to_end(topic, bootstrap):
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
        self._records = kafka_clients.records(topic, self._stop.is_set, from_beginning=True, bootstrap=bootstrap)
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
