"""`facestream events` and `facestream alerts` as a script uses them: a line on stderr once they read,
so nothing sent after it is missed, and only the cameras asked for."""

import json
import select
import subprocess
import sys
import uuid

from helpers.alert import event

from facestream import kafka_clients, kafka_topics
from facestream.schemas import pack_detection


def test_events_says_when_it_reads_and_shows_only_the_cameras_asked_for(bootstrap: str) -> None:
    topic = f"t-{uuid.uuid4().hex[:10]}.detections"
    kafka_topics.ensure_topics({topic: 2}, bootstrap)
    # --max counts what is shown: all three records of the two cameras (their partitions are read in no set order)
    command = [sys.executable, "-m", "facestream", "events", "--topic", topic, "--json", "--max", "3"]
    viewer = subprocess.Popen(
        [*command, "--camera", "gate", "--camera", "porch"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        ready, _, _ = select.select([viewer.stderr], [], [], 60.0)
        assert ready, "facestream events did not say within 60 s that it reads"
        said = viewer.stderr.readline()
        assert said.startswith(f"reading {topic} (") and "from now on, cameras gate, porch only" in said, said
        producer = kafka_clients.producer("test-viewers", bootstrap)
        for seq, camera in enumerate(["door", "gate", "door", "porch", "gate"]):
            kafka_clients.send(producer, topic, pack_detection(event(seq, 100.0 + seq, camera=camera)), camera.encode())
        assert producer.flush(30) == 0
        out, err = viewer.communicate(timeout=60)
    finally:
        viewer.kill()
    shown = [json.loads(line) for line in out.splitlines()]
    assert sorted((e["camera_id"], e["frame_seq"]) for e in shown) == [("gate", 1), ("gate", 4), ("porch", 3)], err
