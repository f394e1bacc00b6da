"""An alert's clip, as the review page asks for it: the alert's camera streams ``--seconds`` of real
640x480 frames (a sample photo, re-encoded as JPEG) with a detection event per frame into topics of
their own on the running broker; then ``facestream.dashboard.clips.alert_clip`` reads them back from Kafka by
capture time, boxes the faces and encodes the clip, ``--repeats`` times (nothing cached). Each clip is
decoded again to count its frames and its length. The target: a 20 s alert's clip within 2 s."""

import io
import statistics
import time
import uuid

import cv2

from bench import save, settings_of
from bench.figures import newest, source
from bench.machine import describe
from bench.settings import ClipBenchConfig
from facestream import kafka_clients, kafka_topics, samples
from facestream.dashboard.clips import FPS, alert_clip
from facestream.schemas import Alert, DetectionEvent, Face, Frame, ModelRef, Sighting, pack_detection, pack_frame

MODEL = ModelRef("yunet", "2023mar", "0" * 64)
TARGET_S = 2.0


def streamed(fps: float, seconds: float) -> tuple[Alert, tuple[str, ...], str]:
    """An alert of ``seconds`` on a camera streaming ``fps`` into fresh topics: (alert, frames, detections)."""
    tag = uuid.uuid4().hex[:8]
    frames_topic, detections_topic = f"bench-clip-{tag}.frames", f"bench-clip-{tag}.detections"
    kafka_topics.ensure_topics({frames_topic: 1, detections_topic: 1})
    photo = cv2.resize(samples.read_photo(samples.fetch() / "obama.jpg"), (640, 480))
    jpeg = cv2.imencode(".jpg", photo, [cv2.IMWRITE_JPEG_QUALITY, 85])[1].tobytes()
    producer = kafka_clients.producer("bench-clip")
    count = int(seconds * fps)
    start = time.time_ns() - int(seconds * 1e9)
    face = Face((250.0, 90.0, 390.0, 260.0), 0.9)
    for seq in range(count):
        captured = start + int(seq * 1e9 / fps)
        kafka_clients.send(producer, frames_topic, pack_frame(Frame("gate", seq, captured, 640, 480, jpeg)), b"gate")
        event = DetectionEvent(f"e{seq}", "gate", seq, captured, captured, MODEL, 640, 480, (face,))
        kafka_clients.send(producer, detections_topic, pack_detection(event), b"gate")
    assert producer.flush(60) == 0, "the broker did not take the frames"
    last = start + int((count - 1) * 1e9 / fps)
    alert = Alert(
        f"clip-{tag}", "stranger", "end", "gate", start, last, (Sighting("e0", 0, start, face.box, 0.1),), count
    )
    return alert, (frames_topic,), detections_topic


def measured(alert: Alert, frames: tuple[str, ...], detections: str, repeats: int) -> dict:
    import av

    times, clip = [], b""
    for _ in range(repeats):
        started = time.perf_counter()
        clip = alert_clip(alert, frames, detections) or b""
        times.append(time.perf_counter() - started)
    with av.open(io.BytesIO(clip), mode="r") as container:
        stream = container.streams.video[0]
        decoded = len(list(container.decode(stream)))
        length = float(container.duration or 0) / 1e6
    return {
        "seconds": [round(t, 3) for t in times],
        "median_s": round(statistics.median(times), 3),
        "slowest_s": round(max(times), 3),
        "clip_frames": decoded,
        "clip_seconds": round(length, 2),
        "clip_bytes": len(clip),
        "codec": "h264",
    }


def run(cfg: ClipBenchConfig, command: str) -> dict:
    kafka_clients.check_reachable()
    rows: list[dict] = []
    result = {
        "benchmark": "clip",
        "command": command,
        "machine": describe(),
        "settings": settings_of(cfg),
        "clip_fps": FPS,
        "target_s": TARGET_S,
        "rows": rows,
        "complete": False,
    }
    for fps in cfg.fps:
        alert, frames, detections = streamed(fps, cfg.seconds)
        row = {
            "camera_fps": fps,
            "frames_in_kafka": int(cfg.seconds * fps),
            **measured(alert, frames, detections, cfg.repeats),
        }
        rows.append(row)
        save(result, cfg.out)
        print(f"{fps:g} fps: clip of {row['clip_frames']} frames, {row['clip_seconds']} s, median {row['median_s']} s")
    result["complete"] = True
    save(result, cfg.out)
    return result


def block(results: dict[str, dict]) -> str:
    """How fast an alert's clip is made, for docs/dashboard.md."""
    result = newest(results, "clip")
    if result is None:
        return "Not measured yet: run `python -m bench clip` (with the broker running)."
    return "\n".join([*render(result), "", source(result)])


def render(result: dict) -> list[str]:
    m, s = result["machine"], result["settings"]
    lines = [
        f"**An alert's clip, {m['cores']} cores of an {m['cpu']}** (`{result['command']}`): "
        f"a {s['seconds']:g} s alert, 640x480 frames read back from Kafka, faces boxed, at most "
        f"{result['clip_fps']:g} frames a second kept, H.264 by PyAV; {s['repeats']} clips each, none cached:",
        "",
        "| camera fps | frames in Kafka | clip frames | clip s | clip kB | median s | slowest s | within 2 s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in result["rows"]:
        lines.append(
            f"| {r['camera_fps']:g} | {r['frames_in_kafka']} | {r['clip_frames']} | {r['clip_seconds']} | "
            f"{r['clip_bytes'] // 1000} | {r['median_s']} | {r['slowest_s']} | "
            f"{'yes' if r['slowest_s'] <= result['target_s'] else 'no'} |"
        )
    return lines
