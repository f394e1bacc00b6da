"""Per-camera state of the partitions a worker holds, kept in a compacted changelog topic.

A camera's state (a JSON-able dict) lives in the changelog partition of the same number as the
partition its records come from, keyed by camera id, the latest value being the state. When the
group gives a worker partitions it reads their changelog partitions to the end first (``restore``);
when it takes them away the worker forgets their cameras (``drop``). Between batches the cameras a
batch changed are written once each (``write_changed``); the worker commits its input offsets only
after those writes are acknowledged, so after a crash the state is never behind the offsets, and an
event replayed onto it is seen as already applied (``rules.state.is_new``).
"""

import logging
import time
from collections.abc import Callable, Iterator

import orjson

from facestream import kafka_clients, kafka_reading
from facestream.errors import BrokerError

log = logging.getLogger(__name__)


class Table:
    """``written`` turns a value of the state that JSON has no form for into one it has (orjson's
    ``default``); the state read back holds what it wrote."""

    def __init__(self, changelog: str, bootstrap: str, written: Callable[[object], object] | None = None) -> None:
        self.changelog = changelog
        self.bootstrap = bootstrap
        self.written = written
        self._states: dict[str, dict] = {}
        self._partition_of: dict[str, int] = {}
        self._changed: set[str] = set()

    def restore(self, partitions: set[int], timeout_s: float = 60.0) -> None:
        """Load the cameras of ``partitions`` from their changelog partitions, read to the end."""
        if not partitions:
            return
        started = time.monotonic()
        records = kafka_reading.read_to_end(self.changelog, self.bootstrap, timeout_s, sorted(partitions))
        for record in records:
            camera_id = record.key().decode()
            if record.value() is None:  # a tombstone: the camera's state was dropped
                self._states.pop(camera_id, None)
                self._partition_of.pop(camera_id, None)
            else:
                self._states[camera_id] = orjson.loads(record.value())
                self._partition_of[camera_id] = record.partition()
        cameras = sum(self._partition_of.get(c) in partitions for c in self._states)
        log.info(
            "%s: %d camera(s) of partition(s) %s restored from %d record(s) in %.2f s",
            self.changelog,
            cameras,
            ",".join(map(str, sorted(partitions))),
            len(records),
            time.monotonic() - started,
        )

    def drop(self, partitions: set[int]) -> None:
        """Forget the cameras of ``partitions`` (no longer this worker's)."""
        gone = [c for c, p in self._partition_of.items() if p in partitions]
        for camera_id in gone:
            del self._states[camera_id], self._partition_of[camera_id]
            self._changed.discard(camera_id)

    def state(self, camera_id: str, partition: int) -> dict:
        """The camera's state (empty at first), to be changed in place; ``partition`` is where its
        records come from, and so where its state is kept."""
        self._partition_of[camera_id] = partition
        return self._states.setdefault(camera_id, {})

    def changed(self, camera_id: str) -> None:
        self._changed.add(camera_id)

    def items(self) -> Iterator[tuple[str, dict]]:
        return iter(list(self._states.items()))

    def write_changed(self, producer) -> int:
        """Queue the changed cameras' states on ``producer`` (the caller flushes); how many."""
        for camera_id in self._changed:
            kafka_clients.send(
                producer,
                self.changelog,
                orjson.dumps(self._states[camera_id], default=self.written),
                camera_id.encode(),
                partition=self._partition_of[camera_id],
            )
        count, self._changed = len(self._changed), set()
        return count


def check_written(producer, topic: str, timeout_s: float = 30.0) -> None:
    """Wait until everything queued on ``producer`` is acknowledged; BrokerError if it is not."""
    left = kafka_clients.flush(producer, topic, timeout_s)
    if left:
        raise BrokerError(f"{left} record(s) to {topic} and the changelog not acknowledged within {timeout_s:.0f} s")
