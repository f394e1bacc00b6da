"""``facestream detect --fronts N`` on a real broker (on the CPU here): a GPU owner process answers N
front processes, each a member of the group; every frame gets its one event, and a dead owner stops
the command with an error naming it."""

import json
import os
import re
import signal
import subprocess
import time

from helpers.kafka import committed_total, detector_config, photos_to, read_topic, run_service

from facestream import samples
from facestream.detector_service.config import detector_command
from facestream.schemas import unpack_detection


def test_every_frame_gets_one_event_through_the_owner_and_two_fronts(bootstrap: str, topics: dict) -> None:
    cameras = {"portraits": samples.portraits_dir(), "annotated": samples.annotated_dir()}
    photos_to(topics["frames"], cameras, max_width=0)
    frames = sum(len(list(folder.iterdir())) for folder in cameras.values())
    log = run_service(detector_command(detector_config(topics, batch=4, fronts=2, embedder="sface")))
    summary = json.loads(next(line for line in reversed(log.splitlines()) if line.startswith("{")))
    assert summary["events"] == frames and len(summary["fronts"]) == 2, summary
    assert "GPU owner serving 2 fronts" in log
    events = [unpack_detection(r.value()) for r in read_topic(bootstrap, topics["detections"], frames)]
    assert len({(e.camera_id, e.frame_seq) for e in events}) == frames == len(events)
    assert all(e.embedder is not None and e.embedder.name == "sface" for e in events if e.faces)
    assert committed_total(bootstrap, topics["group"], topics["frames"]) == frames


def test_a_dead_owner_stops_every_front_and_says_so(bootstrap: str, topics: dict) -> None:
    command = detector_command(detector_config(topics, fronts=2, stop_after_idle_s=300.0))
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=os.environ)
    said, owner, serving = [], None, 0
    deadline = time.monotonic() + 120
    while serving < 2 and time.monotonic() < deadline:  # both fronts past their start, in their loops
        line = process.stdout.readline()
        said.append(line)
        found = re.search(r"GPU owner \(pid (\d+)\)", line)
        owner = int(found.group(1)) if found else owner
        serving += " detector yunet " in line
    assert owner is not None and serving == 2, "".join(said)
    os.kill(owner, signal.SIGKILL)
    rest, _ = process.communicate(timeout=120)
    output = "".join(said) + rest
    assert process.returncode != 0, output[-3000:]
    assert "GPU owner" in output.splitlines()[-1], output[-3000:]
