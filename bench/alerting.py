"""Alerting throughput: detection events per second that alerting workers turn into rule state and
alerts, on the local broker, with real SFace embeddings of the sample photos.

A backlog of events is written first (``cameras`` cameras at 30 fps, ``faces`` faces each: one
enrolled person, the others strangers), then ``workers`` alerting workers of a fresh group drain it.
The rate is taken from the workers' own stats lines (once a second) over the drain, so start-up and
the group join do not count; each run uses a fresh group and a fresh alerts topic.
"""

import re
import select
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from bench import save, settings_of
from bench.machine import describe
from facestream import kafka_clients, samples
from facestream.alerting.config import AlertingConfig, alerting_command
from facestream.detector_service.config import DetectorConfig
from facestream.schemas import (
    DetectionEvent,
    Face,
    GalleryEntry,
    ModelRef,
    event_id_for,
    pack_detection,
    pack_gallery_entry,
)

STATS = re.compile(r"events (\d+) \(")
DETECTOR = ModelRef("yunet", "2023mar", "bench")


@dataclass(frozen=True)
class AlertingBenchConfig:
    events: int
    cameras: int
    faces: int
    workers: tuple[int, ...]
    runs: int
    out: Path


def run(cfg: AlertingBenchConfig, command: str) -> dict:
    bootstrap = kafka_clients.bootstrap_servers()
    kafka_clients.check_reachable(bootstrap)
    tag = uuid.uuid4().hex[:8]
    topic, gallery = f"bench-{tag}.detections", f"bench-{tag}.gallery"
    known, strangers, embedder = _embeddings()
    kafka_clients.ensure_topics({topic: 4, gallery: 1}, bootstrap, configs={gallery: kafka_clients.COMPACTED})
    producer = kafka_clients.producer("bench-alerting", bootstrap)
    entry = GalleryEntry("known", "Known", embedder, (known,), time.time_ns(), ("obama.jpg",))
    kafka_clients.send(producer, gallery, pack_gallery_entry(entry), b"known")
    started = time.perf_counter()
    for event in _events(cfg, known, strangers, embedder):
        kafka_clients.send(producer, topic, pack_detection(event), event.camera_id.encode())
        producer.poll(0)
    producer.flush(60)
    print(f"{cfg.events} events written in {time.perf_counter() - started:.1f} s", flush=True)
    rows = []
    for workers in cfg.workers:
        rates = [_drain(cfg, topic, gallery, workers, f"bench-{tag}-{workers}w-{i}") for i in range(cfg.runs)]
        rows.append({"workers": workers, "events_per_s": sorted(rates)[len(rates) // 2], "runs": rates})
        print(f"{workers} worker(s): {rows[-1]['events_per_s']:.0f} events/s (runs {rates})", flush=True)
    result = {
        "benchmark": "alerting",
        "command": command,
        "machine": describe(),
        "settings": settings_of(cfg),
        "rows": rows,
    }
    save(result, cfg.out)
    print(f"-> {cfg.out}")
    return result


def _embeddings() -> tuple[bytes, list[bytes], ModelRef]:
    """SFace embeddings of the portraits as the detector makes them: Obama's (to enrol) and Biden's."""
    from facestream.detector_service.service import build_processor
    from facestream.tools.gallery import photo_frame

    photos = sorted(samples.portraits_dir().iterdir())
    processor = build_processor(DetectorConfig(provider="cpu", decode="cpu", embedder="sface", batch=len(photos)))
    try:
        outcomes = processor.finish(processor.begin([photo_frame(i, p) for i, p in enumerate(photos)], photos))
    finally:
        processor.close()
    vectors = {outcome.tag.name: outcome.event.faces[0].embedding for outcome in outcomes}
    return vectors["obama.jpg"], [vectors["biden.jpg"]], outcomes[0].event.embedder


def _events(cfg: AlertingBenchConfig, known: bytes, strangers: list[bytes], embedder: ModelRef):
    """Frame after frame of every camera at 30 fps: the enrolled face and ``faces - 1`` strangers."""
    t0 = time.time_ns()
    for i in range(cfg.events // cfg.cameras):
        for camera in range(cfg.cameras):
            faces = tuple(
                Face(
                    (100.0 * k, 50.0, 100.0 * k + 80, 150.0),
                    0.95,
                    embedding=(known, *strangers)[k % (1 + len(strangers))],
                )
                for k in range(cfg.faces)
            )
            yield DetectionEvent(
                event_id=event_id_for(f"cam-{camera:03d}", i, DETECTOR),
                camera_id=f"cam-{camera:03d}",
                frame_seq=i,
                capture_ts_ns=t0 + i * 33_333_333,
                detect_ts_ns=t0 + i * 33_333_333 + 50_000_000,
                model=DETECTOR,
                width=640,
                height=480,
                faces=faces,
                embedder=embedder,
            )


def _drain(cfg: AlertingBenchConfig, topic: str, gallery: str, workers: int, group: str) -> float:
    """Events per second while ``workers`` workers of a new group drain the backlog."""
    config = AlertingConfig(
        group=group, detections_topic=topic, alerts_topic=f"{group}.alerts", gallery_topic=gallery, stats_interval=1.0
    )
    total = (cfg.events // cfg.cameras) * cfg.cameras
    procs = [
        subprocess.Popen(alerting_command(config), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for _ in range(workers)
    ]
    counts = [0] * workers
    samples_: list[tuple[float, int]] = []
    try:
        deadline = time.monotonic() + 600
        while sum(counts) < total and time.monotonic() < deadline:
            ready, _, _ = select.select([p.stdout for p in procs], [], [], 1.0)
            for i, proc in enumerate(procs):
                if proc.stdout in ready:
                    line = proc.stdout.readline()
                    match = STATS.search(line)
                    if match:
                        counts[i] = int(match.group(1))
                        samples_.append((time.monotonic(), sum(counts)))
            if any(p.poll() is not None for p in procs):
                raise RuntimeError("an alerting worker exited during the benchmark")
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(timeout=60)
    draining = [(t, n) for t, n in samples_ if 0 < n]
    if sum(counts) < total or len(draining) < 2:
        raise RuntimeError(f"the workers processed {sum(counts)} of {total} events")
    (t_first, n_first), (t_last, n_last) = draining[0], draining[-1]
    return round((n_last - n_first) / max(t_last - t_first, 1e-9), 1)
