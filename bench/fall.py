"""Fall benchmark: from the first frame of a fall to its alert on the broker, live.

A producer streams the fall footage (``samples.fall_footage``: a real photo of a player toppling
and lying 4 s, then upright) as one camera in a loop, in real time; the pose service (MoveNet) and
an alerting worker (the fall rule only) run as the commands a deployment runs, on topics of their
own. Each fall's ``new`` alert names the capture time of the frame that began the fall
(``started_ts_ns``); the latency is the moment the alert arrived at a reader on the alerts topic
minus that capture time. The rule waits ``hold-s`` on purpose, so the goal is under hold-s + 1 s.
"""

import statistics
import time
import uuid
from typing import Any

from bench import save, settings_of, spawn
from bench.engine import _progress
from bench.figures import Target, newest, source
from bench.machine import describe
from bench.settings import FallBenchConfig
from facestream import kafka_reading, kafka_topics, paths, samples
from facestream.alerting.config import AlertingConfig, alerting_command
from facestream.alerting.rules.fall import FallSettings
from facestream.detector_service.config import PoseConfig, pose_command
from facestream.producers.config import producer_command
from facestream.schemas import unpack_alert


def run(cfg: FallBenchConfig, command: str) -> dict:
    tag = f"fall-bench-{uuid.uuid4().hex[:8]}"
    topics = {part: f"{tag}.{part}" for part in ("frames", "poses", "dlq", "alerts", "detections", "gallery")}
    # One partition each: the alerting worker reads detections and poses together, co-partitioned.
    kafka_topics.ensure_topics({topics[part]: 1 for part in ("frames", "poses", "dlq", "alerts", "detections")})
    footage = samples.fall_footage(paths.home() / "bench" / "fall-footage", cfg.fps)
    loop_s = len(list(footage.iterdir())) / cfg.fps
    logs = paths.home() / "bench" / tag
    logs.mkdir(parents=True, exist_ok=True)
    children = [
        spawn(
            logs / "pose.log",
            pose_command(
                PoseConfig(
                    group=f"{tag}.pose",
                    frames_topic=topics["frames"],
                    detections_topic=topics["poses"],
                    dead_letter_topic=topics["dlq"],
                    provider=cfg.provider,
                    max_wait_ms=0.0,
                )
            ),
        ),
        spawn(
            logs / "alerting.log",
            alerting_command(
                AlertingConfig(
                    group=f"{tag}.alerting",
                    rules="fall",
                    detections_topic=topics["detections"],
                    poses_topic=topics["poses"],
                    alerts_topic=topics["alerts"],
                    gallery_topic=topics["gallery"],
                )
            ),
        ),
    ]
    time.sleep(10.0)  # both warmed up and in their groups before the first frame
    frames = round(cfg.falls * loop_s * cfg.fps)
    children.append(
        spawn(
            logs / "producer.log",
            producer_command(
                [("hall", footage)], fps=cfg.fps, loop=True, max_frames=frames, frames_topic=topics["frames"]
            ),
        )
    )
    latencies: list[float] = []
    deadline = time.monotonic() + cfg.falls * loop_s + 60
    try:
        for msg in kafka_reading.records(
            topics["alerts"], lambda: len(latencies) >= cfg.falls or time.monotonic() > deadline
        ):
            arrived = time.time_ns()
            alert = unpack_alert(msg.value())
            if alert.state == "new":
                latencies.append((arrived - alert.started_ts_ns) / 1e9)
                _progress(f"fall {len(latencies)}: alert {latencies[-1]:.2f} s after the fall began")
    finally:
        for child in reversed(children):
            child.terminate()
            child.wait(timeout=60)
    hold_s = FallSettings().hold_s
    result: dict[str, Any] = {
        "benchmark": "fall",
        "command": command,
        "machine": describe(),
        "settings": settings_of(cfg),
        "hold_s": hold_s,
        "latencies_s": [round(v, 3) for v in latencies],
        "median_s": round(statistics.median(latencies), 3) if latencies else None,
        "max_s": round(max(latencies), 3) if latencies else None,
        "complete": len(latencies) == cfg.falls,
    }
    save(result, cfg.result_file)
    print(
        f"{len(latencies)} of {cfg.falls} falls alerted; latency median {result['median_s']} s, max {result['max_s']} s"
    )
    return result


def render(result: dict) -> list[str]:
    s, m = result["settings"], result["machine"]
    each = ", ".join(f"{v:.2f}" for v in result["latencies_s"])
    return [
        f"**Fall to alert, live, {m['cores']} cores, local broker, pose on {s['provider']}** (`{result['command']}`): "
        f"the fall footage streamed in real time at {s['fps']:g} fps, the pose service and an alerting worker "
        f"(fall rule, hold-s {result['hold_s']:g}); from the capture of the frame that began each fall to its "
        f"`new` alert arriving at a reader: {each} s (median **{result['median_s']:.2f} s**, max "
        f"{result['max_s']:.2f} s). {source(result)}"
    ]


def targets(results: dict[str, dict]) -> list[Target]:
    """The slowest fall's alert against the rule's hold time."""
    fall = newest(results, "fall")
    if fall is None:
        return []
    return [
        Target(
            "Fall alert on the broker within hold-s + 1 s of the fall",
            f"{fall['max_s']:.2f} s at most over {len(fall['latencies_s'])} falls (median {fall['median_s']:.2f} s; "
            f"hold-s {fall['hold_s']:g})",
            fall["max_s"] < fall["hold_s"] + 1,
            fall["_file"],
            f"{fall['max_s']:.2f} s (hold-s {fall['hold_s']:g})",
        )
    ]
