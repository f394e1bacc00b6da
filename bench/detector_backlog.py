"""``python -m bench backlog``: how fast one CPU detector drains a backlog of frames on a real broker.

The producer first fills a fresh topic with N frames (the sample photos cycled, scaled to
--width); then the detector runs over the backlog. Throughput is measured from the events
themselves: (events - 1) / (last detect_ts - first detect_ts), so start-up, group join and the
idle wait at the end do not count. Repeated --runs times; the median is reported.
"""

import json
import statistics
import subprocess
import uuid
from typing import Any

from bench import save, settings_of
from bench.events import events_per_second, read_events
from bench.figures import source
from bench.machine import describe
from bench.settings import BacklogBenchConfig
from facestream import kafka_clients, kafka_topics, samples
from facestream.detector_service.config import DetectorConfig, detector_command
from facestream.producers.config import ProducerConfig, producer_command


def run_once(frames: int, batch: int, width: int, decode_threads: int, ort_threads: int) -> dict:
    tag = uuid.uuid4().hex[:8]
    frames_topic, events_topic = f"bench-{tag}.frames", f"bench-{tag}.detections"
    kafka_topics.ensure_topics({frames_topic: 4, events_topic: 4, f"bench-{tag}.dlq": 1})
    cameras = [("cam", samples.portraits_dir()), ("cam2", samples.annotated_dir())]
    producer = ProducerConfig(
        loop=True, fps=0.0, max_frames=frames // 2, max_width=width, frames_topic=frames_topic, stats_interval_s=60.0
    )
    subprocess.run(
        producer_command(cameras, producer),
        check=True,
        capture_output=True,
    )
    detector = DetectorConfig(
        group=f"bench-{tag}",
        start_at="earliest",  # the backlog written above
        batch=batch,
        frames_topic=frames_topic,
        detections_topic=events_topic,
        dead_letter_topic=f"bench-{tag}.dlq",
        stop_after_idle_s=3.0,
        decode_threads=decode_threads,
        ort_threads=ort_threads,
        stats_interval_s=0.0,
    )
    done = subprocess.run(
        detector_command(detector),
        check=True,
        capture_output=True,
        text=True,
    )
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    events = read_events(kafka_clients.bootstrap_servers(), events_topic, summary["events"])
    return {
        "events": len(events),
        "frames_per_s": round(events_per_second(events), 1),
        "ms_per_frame": summary["ms_per_frame"],
        "provider": summary["provider"],
    }


def run(cfg: BacklogBenchConfig, command: str) -> dict:
    kafka_clients.check_reachable()
    runs = []
    for i in range(cfg.runs):
        runs.append(run_once(cfg.frames, cfg.batch, cfg.width, cfg.decode_threads, cfg.ort_threads))
        print(f"run {i + 1}/{cfg.runs}: {runs[-1]['frames_per_s']} frames/s  {runs[-1]['ms_per_frame']}", flush=True)
    result: dict[str, Any] = {
        "benchmark": "detector_backlog",
        "command": command,
        "machine": describe(),
        "settings": {k: v for k, v in settings_of(cfg).items() if k != "out"},
        "runs": runs,
        "median_frames_per_s": statistics.median(r["frames_per_s"] for r in runs),
    }
    save(result, cfg.out)
    print(f"median {result['median_frames_per_s']} frames/s over {cfg.runs} runs -> {cfg.out}")
    return result


def render(result: dict) -> list[str]:
    m = result["machine"]
    runs = ", ".join(str(r["frames_per_s"]) for r in result["runs"])
    split = result["runs"][0]["ms_per_frame"]
    s = result["settings"]
    return [
        f"**CPU path, one detector, real broker** (`{result['command']}`): "
        f"median **{result['median_frames_per_s']} frames/s** (runs: {runs}) with YuNet at 640x480 input, "
        f"batch {s['batch']}, frames {s['width']} px wide, on {m['cores']} cores of an {m['cpu']} "
        f"(onnxruntime {m['versions'].get('onnxruntime', '?')}, provider {result['runs'][0]['provider']}). "
        f"Per frame (first run): waiting for JPEG decode + letterbox {split['decode_wait']} ms (the rest overlaps "
        f"inference), inference {split['infer']} ms, boxes + event {split['postprocess']} ms. " + source(result),
    ]
