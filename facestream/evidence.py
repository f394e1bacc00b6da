"""An alert's evidence read back from Kafka by capture time (records carry the producer's or the
detector's clock as their timestamp, within moments of capture): its frame with the box drawn on it,
and the faces of its events. Nothing keeps a history of frames and events but Kafka, so the dashboard
(its live feed, and teaching the gallery from an alert) and the alert store (to keep each alert's
snapshot) both ask it here."""

import time
from collections.abc import Callable
from typing import Any, TypeVar

from facestream import kafka_clients, kafka_reading
from facestream.schemas import (
    Alert,
    DetectionEvent,
    Face,
    Frame,
    ModelRef,
    SchemaError,
    unpack_detection,
    unpack_frame,
)

Record = TypeVar("Record", Frame, DetectionEvent)

LOOK_BEFORE_S = 2.0  # records' timestamps trail capture slightly; start a little earlier
# Give up on a partition past this, or past its end. Detection events carry the detector's clock: one
# running behind (SFace on a loaded CPU) stamps them well after capture, so a minute, not seconds.
LOOK_AFTER_S = 60.0
READ_TIMEOUT_S = 10.0


def find_frame(topics: tuple[str, ...], camera_id: str, frame_seq: int, capture_ts_ns: int) -> Frame | None:
    """The frame ``camera_id``/``frame_seq`` from ``topics``, or None if it is no longer kept."""
    return _find(topics, camera_id, frame_seq, capture_ts_ns, unpack_frame)


def find_event(topic: str, camera_id: str, frame_seq: int, capture_ts_ns: int) -> DetectionEvent | None:
    """The detection event of frame ``camera_id``/``frame_seq``, or None if it is no longer kept."""
    return _find((topic,), camera_id, frame_seq, capture_ts_ns, unpack_detection)


def evidence_faces(alert: Alert, detections_topic: str) -> tuple[list[Face], ModelRef | None]:
    """The faces (with their embeddings) behind an alert's sightings, read from their events, and the
    embedder that made them: each sighting's face is the one of its event whose box is its box."""
    faces: list[Face] = []
    embedder = None
    for sighting in alert.evidence:
        box = sighting.box
        if box is None:
            continue
        event = find_event(detections_topic, alert.camera_id, sighting.frame_seq, sighting.capture_ts_ns)
        if event is None or event.embedder is None:
            continue
        face = min(event.faces, key=lambda f: sum(abs(a - b) for a, b in zip(f.box, box)), default=None)
        if face is not None and face.embedding is not None:
            faces.append(face)
            embedder = event.embedder
    return faces, embedder


def _find(
    topics: tuple[str, ...], camera_id: str, frame_seq: int, capture_ts_ns: int, unpack: Callable[[bytes], Record]
) -> Record | None:
    """The first record of ``camera_id`` with ``frame_seq`` in ``topics``, looked for from just before
    its capture time."""
    found = camera_records(topics, camera_id, capture_ts_ns, capture_ts_ns, unpack, lambda r: r.frame_seq == frame_seq)
    return found[0] if found else None


def camera_records(
    topics: tuple[str, ...],
    camera_id: str,
    since_ns: int,
    until_ns: int,
    unpack: Callable[[bytes], Record],
    wanted: Callable[[Record], bool] | None = None,
) -> list[Record]:
    """The records of ``camera_id`` in ``topics`` whose Kafka timestamps fall between ``since_ns`` and
    ``until_ns`` (give or take LOOK_BEFORE_S and LOOK_AFTER_S: the clocks that stamp them trail
    capture), in the order each partition holds them; with ``wanted``, only the first that it accepts."""
    from confluent_kafka import Consumer, TopicPartition

    settings: dict[str, Any] = {"group.id": kafka_reading.EVIDENCE_GROUP, "enable.auto.commit": False}
    consumer = kafka_clients.made(Consumer, kafka_clients.client_config(**settings))
    found: list[Record] = []
    try:
        since_ms = max(0, since_ns // 1_000_000 - int(LOOK_BEFORE_S * 1000))  # Kafka takes no time before 1970
        asked = [
            TopicPartition(topic, p, since_ms)
            for topic in topics
            for p in consumer.list_topics(topic, timeout=READ_TIMEOUT_S).topics[topic].partitions
        ]
        starts = [tp for tp in consumer.offsets_for_times(asked, timeout=READ_TIMEOUT_S) if tp.offset >= 0]
        if not starts:
            return found
        ends = {
            (tp.topic, tp.partition): consumer.get_watermark_offsets(tp, timeout=READ_TIMEOUT_S)[1] for tp in starts
        }
        consumer.assign(starts)
        key, until_ms = camera_id.encode(), until_ns // 1_000_000 + int(LOOK_AFTER_S * 1000)
        deadline = time.monotonic() + READ_TIMEOUT_S
        for msg in kafka_reading.to_the_end(consumer, ends, deadline, past=lambda m: m.timestamp()[1] > until_ms):
            if msg.key() != key:
                continue
            try:
                record = unpack(msg.value())
            except SchemaError:
                continue
            if wanted is None:
                if since_ns <= record.capture_ts_ns <= until_ns:
                    found.append(record)
            elif wanted(record):
                return [record]
        return found
    finally:
        consumer.close()


def evidence_jpeg(alert: Alert, topics: tuple[str, ...]) -> bytes | None:
    """The frame of the alert's first sighting as a JPEG with the sighting's box drawn, or None."""
    if not alert.evidence:
        return None
    sighting = alert.evidence[0]
    return boxed_frame(topics, alert.camera_id, sighting.frame_seq, sighting.capture_ts_ns, sighting.box)


def boxed_frame(
    topics: tuple[str, ...],
    camera_id: str,
    frame_seq: int,
    capture_ts_ns: int,
    box: tuple[float, float, float, float] | None,
) -> bytes | None:
    """Frame ``camera_id``/``frame_seq`` as a JPEG with ``box`` drawn, or None if it is no longer kept."""
    import cv2
    import numpy as np

    frame = find_frame(topics, camera_id, frame_seq, capture_ts_ns)
    if frame is None:
        return None
    image = cv2.imdecode(np.frombuffer(frame.data, np.uint8), cv2.IMREAD_COLOR)
    if image is None:
        return None
    if box is not None:
        x0, y0, x1, y1 = (round(v) for v in box)
        cv2.rectangle(image, (x0, y0), (x1, y1), (40, 40, 230), max(2, image.shape[1] // 200))
    ok, jpeg = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 85])
    return jpeg.tobytes() if ok else None
