"""Which offsets may be committed: those whose every earlier message is fully handled.

A message is *tracked* when it is taken from a partition and *done* once the broker acknowledged
what it produced (its event, or its dead-letter record). The commit point of a partition is the
lowest offset still in flight, so an unacknowledged frame is never committed past, even while
later frames finish first (at-least-once).

An asynchronous commit is *sent* first and *confirmed* when the broker answers: until then it is not
offered again, and one that failed is offered again (a restart then reprocesses no more than it must).
"""

from dataclasses import dataclass, field

TopicPartition = tuple[str, int]


@dataclass
class _Partition:
    in_flight: set[int] = field(default_factory=set)
    next_offset: int | None = None  # one past the highest offset seen
    committed: int | None = None  # confirmed by the broker
    sent: int | None = None  # an asynchronous commit not answered yet


class OffsetTracker:
    def __init__(self) -> None:
        self._parts: dict[TopicPartition, _Partition] = {}

    def track(self, tp: TopicPartition, offset: int) -> None:
        part = self._parts.setdefault(tp, _Partition())
        part.in_flight.add(offset)
        part.next_offset = max(part.next_offset or 0, offset + 1)

    def done(self, tp: TopicPartition, offset: int) -> None:
        """Mark one message handled; unknown partitions (revoked meanwhile) are ignored."""
        part = self._parts.get(tp)
        if part is not None:
            part.in_flight.discard(offset)

    def committable(self, again: bool = False) -> dict[TopicPartition, int]:
        """Offsets to commit now (Kafka's convention: the next offset to read), changed ones only; with
        ``again``, those sent and not answered yet too (a synchronous commit makes sure of them)."""
        ready = {}
        for tp, part in self._parts.items():
            point = min(part.in_flight) if part.in_flight else part.next_offset
            if point is not None and point != part.committed and (again or point != part.sent):
                ready[tp] = point
        return ready

    def mark_sent(self, offsets: dict[TopicPartition, int]) -> None:
        for tp, offset in offsets.items():
            if tp in self._parts:
                self._parts[tp].sent = offset

    def mark_committed(self, offsets: dict[TopicPartition, int]) -> None:
        for tp, offset in offsets.items():
            if tp in self._parts:
                self._parts[tp].committed = offset

    def answered(self, tp: TopicPartition, offset: int, ok: bool) -> None:
        """The broker's answer to a commit of ``offset``: confirmed, or failed (then offered again)."""
        part = self._parts.get(tp)
        if part is None:
            return
        if ok and (part.committed is None or offset > part.committed):
            part.committed = offset
        if part.sent == offset:
            part.sent = None

    def in_flight(self) -> int:
        return sum(len(p.in_flight) for p in self._parts.values())

    def forget(self, partitions: list[TopicPartition]) -> None:
        """Drop partitions this member no longer owns (revoked or lost)."""
        for tp in partitions:
            self._parts.pop(tp, None)
