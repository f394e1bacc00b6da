"""What a camera costs Kafka, measured, for docs/capacity.md: the bytes of a frame as the producer
sends it (JPEG at its default quality 85) at 640x480, 1280x720 and 1920x1080, from the frames of
OpenCV's vtest.avi (people walking in a hall; 768x576, scaled to each size); the bytes of a detection
event with 0, 1 and 4 faces carrying SFace embeddings, and of an alert, as the services pack them. Then
a small run on the local broker checks the sums: ``--check-cameras`` cameras stream 640x480 frames at
``--check-fps`` for ``--check-seconds`` into a topic of their own, and the topic's log segments on disk
are set against what the per-frame figures predict."""

import statistics
import time
import uuid

import cv2
import numpy as np

from bench import save, settings_of
from bench.figures import newest, source
from bench.machine import describe
from bench.settings import CapacityBenchConfig
from facestream import kafka_clients, kafka_topics, paths, samples
from facestream.schemas import (
    Alert,
    DetectionEvent,
    Face,
    Frame,
    ModelRef,
    Sighting,
    pack_alert,
    pack_detection,
    pack_frame,
)

SIZES = {"640x480": (640, 480), "1280x720": (1280, 720), "1920x1080": (1920, 1080)}
QUALITY = 85  # the producer's default --jpeg-quality
DETECTOR, EMBEDDER = ModelRef("yunet", "2023mar", "0" * 64), ModelRef("sface", "2021dec", "1" * 64)


def footage(count: int) -> list[np.ndarray]:
    capture = cv2.VideoCapture(str(samples.fetch() / "vtest.avi"))
    frames: list[np.ndarray] = []
    while len(frames) < count:
        ok, image = capture.read()
        if not ok:
            break
        frames.append(image)
    assert frames, "vtest.avi gave no frames"
    return frames


def frame_bytes(images: list[np.ndarray]) -> dict[str, dict]:
    """Per size: the packed frame record's bytes (JPEG and the record's fields), median and p90."""
    out = {}
    for name, size in SIZES.items():
        sizes = []
        for seq, image in enumerate(images):
            jpeg = cv2.imencode(".jpg", cv2.resize(image, size), [cv2.IMWRITE_JPEG_QUALITY, QUALITY])[1].tobytes()
            sizes.append(len(pack_frame(Frame("camera-0001", seq, time.time_ns(), *size, jpeg))))
        sizes.sort()
        out[name] = {"median": int(statistics.median(sizes)), "p90": sizes[int(len(sizes) * 0.9)]}
    return out


def record_bytes() -> dict[str, int]:
    rng = np.random.default_rng(0)

    def face() -> Face:
        vector = rng.normal(size=128).astype(np.float32)
        embedding = (vector / np.linalg.norm(vector)).astype("<f2").tobytes()
        landmarks = tuple((float(x), float(y)) for x, y in rng.uniform(0, 640, (5, 2)))
        return Face((100.5, 80.25, 180.75, 190.5), 0.93, landmarks, embedding, 121.5)

    now = time.time_ns()
    out = {}
    for faces in (0, 1, 4):
        made = tuple(face() for _ in range(faces))
        event = DetectionEvent(
            "e" * 32, "camera-0001", 1, now, now, DETECTOR, 640, 480, made, EMBEDDER if faces else None
        )
        out[f"event_{faces}_faces"] = len(pack_detection(event))
    sighting = Sighting("e" * 32, 1, now, (100.5, 80.25, 180.75, 190.5), 0.31)
    alert = Alert("a" * 32, "stranger", "update", "camera-0001", now, now, (sighting,) * 3, 5)
    out["alert"] = len(pack_alert(alert))
    return out


def topic_bytes(topic: str) -> int:
    """The bytes of ``topic``'s log segments in the local broker's data folder."""
    data = paths.kafka_dir() / "data"
    return sum(f.stat().st_size for d in data.glob(f"{topic}-*") for f in d.glob("*.log"))


def checked(cfg: CapacityBenchConfig, images: list[np.ndarray], predicted_frame: int) -> dict:
    """Stream the small run; the topic's bytes on disk against the frames times their predicted size."""
    topic = f"bench-capacity-{uuid.uuid4().hex[:8]}"
    kafka_topics.ensure_topics({topic: 2})
    jpegs = [
        cv2.imencode(".jpg", cv2.resize(i, SIZES["640x480"]), [cv2.IMWRITE_JPEG_QUALITY, QUALITY])[1].tobytes()
        for i in images
    ]
    producer = kafka_clients.producer("bench-capacity")
    frames = int(cfg.check_fps * cfg.check_seconds)
    for seq in range(frames):
        for camera in range(cfg.check_cameras):
            name = f"camera-{camera:04d}"
            record = pack_frame(Frame(name, seq, time.time_ns(), 640, 480, jpegs[(seq + camera) % len(jpegs)]))
            kafka_clients.send(producer, topic, record, name.encode())
    assert producer.flush(60) == 0, "the broker did not take the frames"
    time.sleep(2.0)  # the broker writes its segments
    on_disk = topic_bytes(topic)
    sent = frames * cfg.check_cameras
    return {
        "topic": topic,
        "cameras": cfg.check_cameras,
        "fps": cfg.check_fps,
        "seconds": cfg.check_seconds,
        "frames": sent,
        "predicted_bytes": sent * predicted_frame,
        "bytes_on_disk": on_disk,
        "ratio": round(on_disk / (sent * predicted_frame), 3) if sent else None,
    }


def run(cfg: CapacityBenchConfig, command: str) -> dict:
    kafka_clients.check_reachable()
    images = footage(cfg.frames)
    frames = frame_bytes(images)
    result: dict = {
        "benchmark": "capacity",
        "command": command,
        "machine": describe(),
        "settings": settings_of(cfg),
        "footage": "vtest.avi (OpenCV), 768x576 scaled to each size",
        "jpeg_quality": QUALITY,
        "frame_record_bytes": frames,
        "record_bytes": record_bytes(),
        "check": checked(cfg, images, frames["640x480"]["median"]),
        "complete": True,
    }
    save(result, cfg.out)
    check = result["check"]
    assert isinstance(check, dict)
    print({k: v["median"] for k, v in frames.items()}, result["record_bytes"], check["ratio"])
    return result


# The plan's deployment: what docs/capacity.md recommends, stated once here.
PLAN_FPS = 10.0  # per camera: what the detector needs to follow faces (bench tracks: IDF1 0.98 at 5-30 fps)
REPLICATION = 3
RETENTION_H = {"frames": 24, "detections": 7 * 24, "alerts": 30 * 24}  # the topics'
EVENT_READERS = 3  # alerting, the alert store (sightings) and the dashboard read every event
BROKER_NIC_GBPS, NIC_SHARE = 25.0, 0.5  # a broker's network, and the share Kafka may use (headroom for faults)
GPU_FILE = "e2e-yunet-cuda-r1-f4-owner-batch-256-h100-native-300x5-450x3.json"
LATENCY_MS = 200.0


def _per_gpu(results: dict[str, dict]) -> tuple[float, int, float, str]:
    """Frames a second one GPU held within the latency limit in every run: (frames/s, cameras, fps, file)."""
    result = results[GPU_FILE]
    counts = sorted({row["cameras"] for row in result["rows"]})
    held = max(c for c in counts if all(r["latency_ms_p99"] < LATENCY_MS for r in result["rows"] if r["cameras"] == c))
    fps = result["settings"]["fps"]
    return held * fps, held, fps, result["machine"].get("gpu", "GPU").split(",")[0]


def _per_worker(results: dict[str, dict]) -> float:
    rows = newest(results, "alerting")["rows"]  # type: ignore[index]
    return min(r["events_per_s"] for r in rows if r["workers"] == 1)


def plan(result: dict, results: dict[str, dict], cameras: int, size: str = "640x480") -> dict:
    """Brokers, disks, GPUs and partitions for ``cameras`` at PLAN_FPS, from the measured sizes."""
    frame = result["frame_record_bytes"][size]["median"]
    event = result["record_bytes"]["event_1_faces"]
    frames_bps, events_bps = cameras * PLAN_FPS * frame, cameras * PLAN_FPS * event
    written = frames_bps + events_bps
    network = written * REPLICATION + frames_bps + events_bps * EVENT_READERS  # in, copies, reads
    per_broker = BROKER_NIC_GBPS * 1e9 / 8 * NIC_SHARE
    disk = REPLICATION * (frames_bps * RETENTION_H["frames"] + events_bps * RETENTION_H["detections"]) * 3600
    gpu_fps = _per_gpu(results)[0]
    # the GPU's rate was measured on 640x480 frames: larger JPEGs cost more to decode, not measured
    gpus = int(-(-cameras * PLAN_FPS // gpu_fps)) if size == "640x480" else None
    workers = int(-(-cameras * PLAN_FPS // (_per_worker(results) * 0.5)))  # half a worker's rate: headroom
    brokers = max(REPLICATION, int(-(-network // per_broker)))
    partitions = max(gpus or 1, workers) * 2  # room to double the replicas without re-partitioning
    return {
        "cameras": cameras,
        "size": size,
        "written_MBps": round(written / 1e6, 1),
        "network_MBps": round(network / 1e6, 1),
        "brokers": brokers,
        "disk_TB": round(disk / 1e12, 1),
        "disk_TB_per_broker": round(disk / 1e12 / brokers, 1),
        "gpus": gpus,
        "alerting_workers": workers,
        "partitions": partitions,
    }


def block(results: dict[str, dict]) -> str:
    """docs/capacity.md's figures."""
    result = newest(results, "capacity")
    if result is None:
        return "Not measured yet: run `python -m bench capacity` (with the broker running)."
    return "\n".join([*render(result, results), "", source(result)])


def render(result: dict, results: dict[str, dict] | None = None) -> list[str]:
    m, check, records = result["machine"], result["check"], result["record_bytes"]
    lines = [
        f"**What a camera costs Kafka** (`{result['command']}`, {m['cores']} cores): a frame record as the producer "
        f"sends it (JPEG quality {result['jpeg_quality']}, {result['footage']}), and the other records:",
        "",
        "| record | bytes (median) | p90 | per camera at 10 fps |",
        "|---|---|---|---|",
    ]
    for size, figures in result["frame_record_bytes"].items():
        lines.append(
            f"| frame {size} | {figures['median']:,} | {figures['p90']:,} | {figures['median'] * 10 / 1e6:.2f} MB/s |"
        )
    for name, size in records.items():
        lines.append(f"| {name.replace('_', ' ')} | {size:,} | | {size * 10 / 1e3:.1f} kB/s |")
    lines += [
        "",
        f"Checked on the local broker: {check['cameras']} cameras at {check['fps']:g} fps for {check['seconds']:g} s, "
        f"{check['frames']:,} frames: {check['bytes_on_disk'] / 1e6:.1f} MB of log segments against "
        f"{check['predicted_bytes'] / 1e6:.1f} MB predicted ({check['ratio']:.3f}x: Kafka's batch headers).",
    ]
    if results is None or GPU_FILE not in results or newest(results, "alerting") is None:
        return lines
    gpu_fps, held, fps, gpu = _per_gpu(results)
    lines += [
        "",
        f"**Worked examples** at {PLAN_FPS:g} fps per camera, replication {REPLICATION}, frames kept "
        f"{RETENTION_H['frames']} h and detection events {RETENTION_H['detections'] // 24} days, brokers with "
        f"{BROKER_NIC_GBPS:g} Gb/s of which Kafka may use {NIC_SHARE:.0%}; one GPU takes {gpu_fps:,.0f} frames/s "
        f"(YuNet held {held} cameras at {fps:g} fps on one {gpu}, `bench/results/{GPU_FILE}`), one alerting worker "
        f"is planned at half the {_per_worker(results):,.0f} events/s it made (`bench alerting`):",
        "",
        "| cameras | frame size | written MB/s | broker network MB/s | brokers | disk TB (per broker) | GPUs | "
        "alerting workers | partitions |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for cameras, size in ((1000, "640x480"), (10000, "640x480"), (1000, "1920x1080")):
        p = plan(result, results, cameras, size)
        lines.append(
            f"| {cameras:,} | {size} | {p['written_MBps']:,} | {p['network_MBps']:,} | {p['brokers']} | "
            f"{p['disk_TB']:,} ({p['disk_TB_per_broker']:,}) | {p['gpus'] or 'not measured'} | "
            f"{p['alerting_workers']} | {p['partitions']} |"
        )
    return lines
