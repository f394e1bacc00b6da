"""Kafka plumbing on this machine: the detector's consume -> batch -> produce -> commit loop with a
no-op model, against Kafka's own ``kafka-consumer-perf-test`` tool class, same broker, same frames.

Each run fills a fresh topic with real JPEG frames (the sample photos, 640 px wide, as the producer
would send them), then lets Kafka's ``ConsumerPerformance`` read them all, then runs the detector's
own ``DetectorService`` over them with a processor that validates each frame message and emits an
empty detection event (no JPEG decode, no inference), once at least once and once with
``--exactly-once`` (transactions), side by side. Both rates leave out joining the group: Kafka's
tool reports its fetch rate; ours is events / (last event - first event) by their timestamps.
"""

import statistics
import subprocess
import uuid
from concurrent.futures import Future
from typing import Any

import numpy as np
from confluent_kafka import Producer

from bench import save
from bench.events import events_per_second, read_events
from bench.figures import Target, runs_of, source
from bench.machine import describe
from bench.pipeline import jpeg_corpus
from bench.settings import KafkaBenchConfig
from facestream import kafka_clients, kafka_topics
from facestream.broker.local import LocalBroker, find_java
from facestream.detector_service.events import build_events
from facestream.detector_service.models.base import Detections
from facestream.detector_service.processor import Outcome, Pending
from facestream.detector_service.service import DetectorConfig, DetectorService
from facestream.detector_service.stats import Stats
from facestream.schemas import ModelRef, pack_frame

NO_OP = ModelRef("noop", "0", "none")
# The detector consumer's fetch sizes (detector_service.consumer), in Java client names.
FETCH_SETTINGS = {
    "fetch.max.bytes": 4 * kafka_clients.MAX_MESSAGE_BYTES,
    "max.partition.fetch.bytes": kafka_clients.MAX_MESSAGE_BYTES,
}
EMPTY = Detections(boxes=np.zeros((0, 4), np.float32), scores=np.zeros(0, np.float32))


class NoOpProcessor:
    """Stands in for the model: every frame gets an empty event at once."""

    def __init__(self) -> None:
        self.stats = Stats(provider="none", fallback=False)

    def describe(self) -> str:
        return "no-op model (Kafka plumbing benchmark)"

    def begin(self, frames: list, tags: list) -> Pending:
        done: Future = Future()
        done.set_result(None)
        return Pending(frames, tags, done)

    def finish(self, pending: Pending) -> list[Outcome]:
        self.stats.batches += 1
        frames = pending.frames
        events = build_events(frames, EMPTY, np.zeros(len(frames), np.int64), NO_OP)
        return [Outcome(tag, event=event) for event, tag in zip(events, pending.tags)]

    def close(self) -> None:
        pass


def run(cfg: KafkaBenchConfig, command: str) -> dict:
    frames, batch, runs, out = cfg.frames, cfg.batch, cfg.runs, cfg.out
    bootstrap = kafka_clients.bootstrap_servers()
    kafka_clients.check_reachable(bootstrap)
    broker = LocalBroker()
    broker.install_jars()
    payloads = [pack_frame(f) for f in jpeg_corpus(640, frames)]
    results = []
    for i in range(runs):
        tag = uuid.uuid4().hex[:8]
        topic = f"bench-kafka-{tag}.frames"
        outputs = [f"{topic}.events", f"{topic}.events-once", f"{topic}.dlq"]
        kafka_topics.ensure_topics({topic: 4, outputs[0]: 4, outputs[1]: 4, outputs[2]: 1}, bootstrap)
        _fill(bootstrap, topic, payloads)
        try:
            theirs = _kafka_tool(broker, bootstrap, topic, frames)
            ours = _ours(bootstrap, topic, frames, batch)
            once = _ours(bootstrap, topic, frames, batch, exactly_once=True)
        finally:  # a run writes gigabytes: give the disk back
            kafka_clients.admin(bootstrap).delete_topics([topic, *outputs])
        results.append(
            {
                "kafka_consumer_perf_test_msgs_per_s": theirs,
                "facestream_msgs_per_s": ours,
                "ratio": round(ours / theirs, 3),
                "facestream_exactly_once_msgs_per_s": once,
                "exactly_once_ratio": round(once / ours, 3),
            }
        )
        print(
            f"run {i + 1}/{runs}: kafka-consumer-perf-test {theirs:.0f} msg/s, facestream plumbing {ours:.0f} "
            f"msg/s, ratio {ours / theirs:.2f}; with --exactly-once {once:.0f} msg/s ({once / ours:.2f}x)",
            flush=True,
        )
    result: dict[str, Any] = {
        "benchmark": "kafka",
        "command": command,
        "machine": describe(),
        "settings": {
            "frames": frames,
            "batch": batch,
            "runs": runs,
            "fetch_settings_both_sides": FETCH_SETTINGS,
            "mean_frame_bytes": round(sum(map(len, payloads)) / len(payloads)),
        },
        "runs": results,
        "median_ratio": statistics.median(r["ratio"] for r in results),
        "median_facestream_msgs_per_s": statistics.median(r["facestream_msgs_per_s"] for r in results),
        "median_kafka_tool_msgs_per_s": statistics.median(r["kafka_consumer_perf_test_msgs_per_s"] for r in results),
        "median_exactly_once_msgs_per_s": statistics.median(r["facestream_exactly_once_msgs_per_s"] for r in results),
        "median_exactly_once_ratio": statistics.median(r["exactly_once_ratio"] for r in results),
    }
    save(result, out)
    print(f"median ratio facestream / kafka-consumer-perf-test: {result['median_ratio']:.2f} -> {out}")
    return result


def _fill(bootstrap: str, topic: str, payloads: list[bytes]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "message.max.bytes": 16 << 20})
    for i, payload in enumerate(payloads):
        while True:
            try:
                producer.produce(topic, key=f"cam-{i % 8}".encode(), value=payload)
                break
            except BufferError:
                producer.poll(0.1)
    producer.flush(60)


def _kafka_tool(broker: LocalBroker, bootstrap: str, topic: str, frames: int) -> float:
    """Kafka's own consumer benchmark (``bin/kafka-consumer-perf-test.sh`` runs this class), given the
    same fetch sizes as the detector's consumer so that neither side wins by configuration."""
    config = broker.root / "perf-consumer.properties"
    config.write_text("".join(f"{k}={v}\n" for k, v in FETCH_SETTINGS.items()))
    cmd = [
        find_java(),
        "-Xmx1g",
        f"-Dlog4j2.configurationFile={broker.log4j_config()}",
        "-cp",
        f"{broker.lib}/*",
        "org.apache.kafka.tools.ConsumerPerformance",
        "--bootstrap-server",
        bootstrap,
        "--topic",
        topic,
        "--messages",
        str(frames),
        "--group",
        f"perf-{uuid.uuid4().hex[:8]}",
        "--timeout",
        "60000",
        "--consumer.config",
        str(config),
    ]
    output = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=300).stdout
    if "Exiting before consuming the expected number" in output:
        raise RuntimeError(f"kafka-consumer-perf-test did not read all {frames} frames:\n{output[-2000:]}")
    lines = [line for line in output.splitlines() if line.strip()]
    header_at = next(i for i, line in enumerate(lines) if line.startswith("start.time"))
    names = [h.strip() for h in lines[header_at].split(",")]
    # The figures are the first line after the header that starts with a date (log lines interleave).
    row = next(line for line in lines[header_at + 1 :] if line[:4].isdigit() and line.count(",") == len(names) - 1)
    values = [v.strip() for v in row.split(",")]
    return float(dict(zip(names, values))["fetch.nMsg.sec"])


def _ours(bootstrap: str, topic: str, frames: int, batch: int, exactly_once: bool = False) -> float:
    events = f"{topic}.events" + ("-once" if exactly_once else "")  # each run reads its own events
    config = DetectorConfig(
        group=f"bench-{uuid.uuid4().hex[:8]}",
        start_at="earliest",  # the whole backlog, however long ago it was written
        exactly_once=exactly_once,
        batch=batch,
        max_wait_ms=5,
        frames_topic=topic,
        detections_topic=events,
        dead_letter_topic=f"{topic}.dlq",
        stats_interval_s=0,
        stop_after_idle_s=2.0,
    )
    DetectorService(config, processor=NoOpProcessor(), bootstrap=bootstrap).run()
    return events_per_second(read_events(bootstrap, events, frames))


def render(result: dict) -> list[str]:
    m, s = result["machine"], result["settings"]
    runs = ", ".join(
        f"{r['facestream_msgs_per_s']:.0f} vs {r['kafka_consumer_perf_test_msgs_per_s']:.0f}" for r in result["runs"]
    )
    ours, theirs = result["median_facestream_msgs_per_s"], result["median_kafka_tool_msgs_per_s"]
    return [
        f"**Kafka plumbing, {m['cores']} cores, local broker** (`{result['command']}`): the detector's consume -> "
        "batch -> produce event -> commit loop with a no-op model reads "
        f"**{ours:.0f} frames/s** against **{theirs:.0f}** for Kafka's own "
        f"`kafka-consumer-perf-test` (ConsumerPerformance, same broker, same {s['frames']} frames of "
        f"{s['mean_frame_bytes'] / 1000:.0f} KB, same fetch sizes): median ratio **{result['median_ratio']:.2f}** "
        f"(runs, ours vs theirs: {runs})."
        + (
            f" With `--exactly-once` (a transaction per batch, committed with its frames' offsets) the same loop "
            f"reads **{result['median_exactly_once_msgs_per_s']:.0f} frames/s**, "
            f"**{result['median_exactly_once_ratio']:.2f}x** at least once's in the same runs."
            if "median_exactly_once_ratio" in result
            else ""
        )
        + f" {source(result)}"
    ]


def plumbing(results: dict[str, dict]) -> dict | None:
    return max(runs_of(results, "kafka"), key=lambda r: r["settings"]["frames"], default=None)


def targets(results: dict[str, dict]) -> list[Target]:
    """The detector's Kafka loop against Kafka's own consumer, in the run with the most frames."""
    run = plumbing(results)
    if not run:
        return []
    return [
        Target(
            "Kafka plumbing >= 0.5x kafka-consumer-perf-test",
            f"{run['median_ratio']:.2f}x",
            run["median_ratio"] >= 0.5,
            run["_file"],
        )
    ]
