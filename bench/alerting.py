"""Alerting throughput: detection events per second that alerting workers turn into rule state and
alerts, on the local broker, with real SFace embeddings of the sample photos.

A backlog of events is written first (``cameras`` cameras at 30 fps, ``faces`` faces each: one
enrolled person, the others strangers), then ``workers`` alerting workers of a fresh group drain it.
The rate is taken from the workers' own stats lines (four a second) from when every worker has
events (the group has settled) to the end, so start-up and joins do not count; each run uses a fresh
group and a fresh alerts topic. A topic's partitions bound how many workers share it.
"""

import json
import re
import select
import subprocess
import time
import uuid
from pathlib import Path
from typing import IO, Any

from bench import save, settings_of
from bench.figures import Target, numbers, runs_of, source
from bench.machine import cpu_seconds, describe
from bench.settings import AlertingBenchConfig
from facestream import kafka_clients, kafka_topics, paths, samples
from facestream.alerting.config import AlertingConfig, alerting_command
from facestream.broker.local import LocalBroker
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


def run(cfg: AlertingBenchConfig, command: str) -> dict:
    bootstrap = kafka_clients.bootstrap_servers()
    kafka_clients.check_reachable(bootstrap)
    tag = uuid.uuid4().hex[:8]
    topic, gallery = f"bench-{tag}.detections", f"bench-{tag}.gallery"
    known, strangers, embedder = _embeddings()
    kafka_topics.ensure_topics(
        {topic: cfg.partitions, gallery: 1}, bootstrap, configs={gallery: kafka_topics.COMPACTED}
    )
    producer = kafka_clients.producer("bench-alerting", bootstrap)
    entry = GalleryEntry("known", "Known", embedder, (known,), time.time_ns(), ("obama.jpg",))
    kafka_clients.send(producer, gallery, pack_gallery_entry(entry), b"known")
    started = time.perf_counter()
    for event in _events(cfg, known, strangers, embedder):
        kafka_clients.send(producer, topic, pack_detection(event), event.camera_id.encode())
        producer.poll(0)
    producer.flush(60)
    print(f"{cfg.events} events written in {time.perf_counter() - started:.1f} s", flush=True)
    rows: list[dict] = []
    result: dict[str, Any] = {
        "benchmark": "alerting",
        "command": command,
        "machine": describe(),
        "settings": settings_of(cfg),
        "rows": rows,
        "complete": False,
    }
    for workers in cfg.workers:
        runs: dict[str, list[dict]] = {tracks: [] for tracks in cfg.face_tracks}
        for i in range(cfg.runs):  # tracks on and off in turn, so drifts of the machine touch both alike
            for tracks in cfg.face_tracks:
                runs[tracks].append(
                    _drain(cfg, topic, gallery, workers, tracks, f"bench-{tag}-{workers}w-{tracks}-{i}")
                )
        for tracks, made in runs.items():
            rates = [r["events_per_s"] for r in made]
            median = sorted(made, key=lambda r: r["events_per_s"])[len(made) // 2]
            rows.append({"workers": workers, "face_tracks": tracks, **median, "runs": rates})
            print(
                f"{workers} worker(s), face tracks {tracks}: {median['events_per_s']:.0f} events/s, "
                f"cores {median['cores_busy']} (runs {rates})"
            )
        save(result, cfg.out)  # what is measured survives a run stopped at a time limit
    result["complete"] = True
    save(result, cfg.out)
    print(f"-> {cfg.out}")
    return result


def _embeddings() -> tuple[bytes, list[bytes], ModelRef]:
    """SFace embeddings of the portraits as the detector makes them: Obama's (to enrol) and Biden's.
    Made once per FACESTREAM_HOME and kept in its bench folder, so a machine that has the file (the
    GPU machine, carried in) needs neither the models nor the photos."""
    cache = paths.home() / "bench" / "alerting-embeddings.json"
    if cache.exists():
        saved = json.loads(cache.read_text())
        return bytes.fromhex(saved["known"]), [bytes.fromhex(saved["stranger"])], ModelRef(**saved["embedder"])
    known, strangers, embedder = _detected_embeddings()
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps({"known": known.hex(), "stranger": strangers[0].hex(), "embedder": embedder.fields()}))
    return known, strangers, embedder


def _detected_embeddings() -> tuple[bytes, list[bytes], ModelRef]:
    from facestream.detector_service.service import build_processor
    from facestream.tools.gallery import photo_frame

    photos = sorted(samples.portraits_dir().iterdir())
    processor = build_processor(
        DetectorConfig(provider="cpu", decode="cpu", embedder="sface", embed_every_frame=True, batch=len(photos))
    )
    try:
        outcomes = processor.finish(processor.begin([photo_frame(i, p) for i, p in enumerate(photos)], photos))
    finally:
        processor.close()
    vectors: dict[str, bytes] = {}
    for outcome in outcomes:  # each photo's one face, embedded
        event = outcome.event
        assert isinstance(event, DetectionEvent) and event.embedder is not None and event.faces[0].embedding
        vectors[Path(str(outcome.tag)).name], embedder = event.faces[0].embedding, event.embedder
    return vectors["obama.jpg"], [vectors["biden.jpg"]], embedder


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


def _drain(cfg: AlertingBenchConfig, topic: str, gallery: str, workers: int, tracks: str, group: str) -> dict:
    """Events per second while ``workers`` workers of a new group drain the backlog (following faces
    or not, as ``tracks`` says), and the cores each worker and the broker kept busy meanwhile."""
    config = AlertingConfig(
        group=group,
        detections_topic=topic,
        poses_topic=f"{group}.poses",
        alerts_topic=f"{group}.alerts",
        gallery_topic=gallery,
        stats_interval_s=0.25,  # a fast group drains the backlog in seconds
        face_tracks={"follow": tracks == "on"},
    )
    total = (cfg.events // cfg.cameras) * cfg.cameras
    procs = [
        subprocess.Popen(alerting_command(config), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for _ in range(workers)
    ]
    broker = LocalBroker().status().pid
    pids = {**{f"worker-{i}": p.pid for i, p in enumerate(procs)}, **({"broker": broker} if broker else {})}
    counts = [0] * workers
    first: tuple[float, int, dict[str, float]] | None = None  # (time, events, CPU seconds) once draining
    last = first
    try:
        deadline = time.monotonic() + 600
        while sum(counts) < total and time.monotonic() < deadline:
            if any(p.poll() is not None for p in procs):
                raise RuntimeError("an alerting worker exited during the benchmark")
            outputs = [_output(p) for p in procs]
            ready, _, _ = select.select(outputs, [], [], 1.0)
            for i, output in enumerate(outputs):
                match = STATS.search(output.readline()) if output in ready else None
                if match:
                    counts[i] = int(match.group(1))
                    if all(counts):  # every worker has its partitions: the group is settled
                        last = (time.monotonic(), sum(counts), {n: sum(cpu_seconds(p)[:2]) for n, p in pids.items()})
                        first = first or last
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(timeout=60)
    if sum(counts) < total or first is None or last is None or last is first:
        raise RuntimeError(f"the workers processed {sum(counts)} of {total} events")
    elapsed = last[0] - first[0]
    return {
        "events_per_s": round((last[1] - first[1]) / elapsed, 1),
        "cores_busy": {name: round((last[2][name] - first[2][name]) / elapsed, 2) for name in pids},
    }


def _output(proc: subprocess.Popen) -> IO[str]:
    """A worker's standard output (its stats lines), which it was started with."""
    assert proc.stdout is not None
    return proc.stdout


def render(result: dict) -> list[str]:
    m, s = result["machine"], result["settings"]
    rows = "; ".join(
        f"{r['workers']} worker(s){_tracks(r)} **{r['events_per_s']:.0f} events/s** (runs: {numbers(r['runs'])}; "
        f"cores busy {', '.join(f'{k} {v:g}' for k, v in r['cores_busy'].items())})"
        for r in result["rows"]
    )
    return [
        f"**Alerting, {m['cores']} cores, local broker** (`{result['command']}`): a backlog of {s['events']} "
        f"detection events from {s['cameras']} cameras on {s.get('partitions', 4)} partitions, {s['faces']} "
        "faces each with real SFace embeddings (one enrolled person), drained by workers of a fresh group "
        f"(the default rules): {rows}. {source(result)}"
    ]


def _tracks(row: dict) -> str:
    """How a row ran, for its text: face tracks on or off (rows made before tracks existed say nothing)."""
    return "" if "face_tracks" not in row else f", face tracks {row['face_tracks']},"


def targets(results: dict[str, dict]) -> list[Target]:
    """One worker's events/s, medians of 3 or more runs, per machine: the goal holds where it holds on
    all of them (with face tracks, the default, where a run says). A baseline file was made by code the
    service no longer runs (kept for comparison). And what following faces costs one worker."""
    current = [r for r in runs_of(results, "alerting") if not r.get("baseline")]
    singles = [
        (row, r)
        for r in current
        for row in r["rows"]
        if row["workers"] == 1 and len(row["runs"]) >= 3 and row.get("face_tracks", "on") == "on"
    ]
    if not singles:
        return []
    singles.sort(key=lambda pair: pair[0]["events_per_s"])
    return _tracking_cost(current) + [
        Target(
            "One alerting worker >= 9,000 events/s (300 cameras, 30 fps)",
            ", ".join(f"{row['events_per_s']:.0f}/s on {run['machine']['cores']} cores" for row, run in singles)
            + " (medians)",
            singles[0][0]["events_per_s"] >= 9000,
            ", ".join(run["_file"] for _, run in singles),
            f"{singles[0][0]['events_per_s']:.0f}/s at least (medians)",
        )
    ]


def _tracking_cost(current: list[dict]) -> list[Target]:
    """One worker's events/s with face tracks against without, side by side in the newest run of both."""
    both = [r for r in current if {row.get("face_tracks") for row in r["rows"]} >= {"on", "off"}]
    if not both:
        return [Target("Face tracks cost a worker <= 10%", None, None, None)]
    result = both[-1]
    rate = {row["face_tracks"]: row["events_per_s"] for row in result["rows"] if row["workers"] == 1}
    cost = rate["off"] / rate["on"] - 1  # the time per event that following adds
    return [
        Target(
            "Face tracks cost a worker <= 10%",
            f"{cost:+.1%} ({rate['on']:.0f} events/s with, {rate['off']:.0f} without; medians, "
            f"{result['machine']['cores']} cores)",
            cost <= 0.10,
            result["_file"],
            f"{cost:+.1%}",
        )
    ]
