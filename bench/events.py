"""Reading a benchmark's detection events back, and the rate they were made at."""

import time

from facestream import kafka_reading
from facestream.schemas import DetectionEvent, unpack_detection


def read_events(bootstrap: str, topic: str, expected: int, timeout_s: float = 120.0) -> list[DetectionEvent]:
    """Every event of ``topic`` from the start; RuntimeError if fewer than ``expected`` arrive in time."""
    events: list = []
    deadline = time.monotonic() + timeout_s

    def done() -> bool:
        return len(events) >= expected or time.monotonic() >= deadline

    for msg in kafka_reading.records(topic, done, bootstrap=bootstrap):
        events.append(unpack_detection(msg.value()))
    if len(events) < expected:
        raise RuntimeError(f"expected {expected} events on {topic}, read {len(events)}")
    return events


def events_per_second(events: list[DetectionEvent]) -> float:
    """(events - 1) / (last detect_ts - first): start-up and idle time around the work do not count."""
    stamps = sorted(e.detect_ts_ns for e in events)
    return (len(stamps) - 1) / ((stamps[-1] - stamps[0]) / 1e9)
