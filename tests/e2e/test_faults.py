"""Faults a deployment meets, against the real broker: oversized and hostile input, moved partitions.
Each test reports what it produced, what got an outcome, and what was lost or duplicated."""

import hashlib
import os
import sys

import cv2
import numpy as np
from kafka_helpers import committed_total, detector_args, read_topic, run_service

from facestream import kafka_clients
from facestream.schemas import Frame, pack_frame, unpack_detection


def test_a_dead_letter_too_large_to_forward_keeps_its_reason_and_digest(
    bootstrap: str, topics: dict, produce_raw
) -> None:
    # A dead-letter topic that takes 1 MB, as Kafka's default does: a 2 MB frame is refused by the
    # broker, one near the client's 16 MiB limit could not even be sent with its headers.
    dlq = topics["dlq"] + "-small"
    kafka_clients.ensure_topics({dlq: 1}, bootstrap, configs={dlq: {"max.message.bytes": str(1024 * 1024)}})
    garbage = [os.urandom(2 * 1024 * 1024), os.urandom(16 * 1024 * 1024 - 4096)]
    small = cv2.imencode(".jpg", np.full((48, 64, 3), 128, np.uint8))[1].tobytes()
    for seq, data in enumerate([*garbage, small]):
        produce_raw(topics["frames"], b"cam", pack_frame(Frame("cam", seq, 1, 64, 48, data)))

    log = run_service([sys.executable, "-m", "facestream", "detect", *detector_args(topics, dead_letter_topic=dlq)])

    dead = read_topic(bootstrap, dlq, 2)
    events = read_topic(bootstrap, topics["detections"], 1)
    report = {"produced": 3, "dead letters": len(dead), "events": len(events)}
    assert report == {"produced": 3, "dead letters": 2, "events": 1}, report
    headers = [dict(record.headers()) for record in dead]
    assert all(record.value() in (None, b"") for record in dead)
    sizes = sorted(int(h["facestream.value_bytes"]) for h in headers)
    expected = sorted(len(pack_frame(Frame("cam", seq, 1, 64, 48, data))) for seq, data in enumerate(garbage))
    assert sizes == expected
    digests = {h["facestream.value_sha256"].decode() for h in headers}
    assert digests == {
        hashlib.sha256(pack_frame(Frame("cam", seq, 1, 64, 48, data))).hexdigest() for seq, data in enumerate(garbage)
    }
    assert all(b"do not decode" in h["facestream.error"] and h["facestream.stage"] == b"decode" for h in headers)
    assert unpack_detection(events[0].value()).frame_seq == 2
    assert committed_total(bootstrap, topics["group"], topics["frames"]) == 3  # nothing lost, nothing stuck
    assert "too large" in log
