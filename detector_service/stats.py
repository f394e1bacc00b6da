"""Counters of the detector service and the periodic stats line that shows them."""

import logging
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from facestream.counters import Counters, counter
from facestream.histograms import BATCH_S, BATCH_SIZE, LATENCY_S, Histogram

log = logging.getLogger(__name__)

# The measured stages, by the one name the stats line, the metrics (stage label) and the result files
# use; each is a ``<name>_s`` field of Stats. decode: JPEG decoding + letterboxing, busy in its own
# thread (mostly hidden behind inference); decode_wait: the part inference waited for; infer:
# inference with its host copies; embed: aligning and embedding the faces (--embedder); postprocess:
# outputs to boxes and events.
STAGES = ("decode", "decode_wait", "infer", "embed", "postprocess")


@dataclass
class Stats(Counters):
    provider: str
    fallback: bool
    warning: str | None = None  # repeated on every stats line (e.g. random weights)
    decoder: str = "cpu"  # where JPEGs are decoded: "gpu" (nvImageCodec) or "cpu" (thread pool)
    decode_fallback: bool = False  # on the CPU although inference runs on a GPU, or not as the default set it up
    # Counted here and exported as they are declared (facestream.counters); the stats line is its own.
    frames: int = counter("", "facestream_frames", "Frames taken from Kafka (valid or not)")
    events: int = counter("", "facestream_{events}_events", "{Events} events acknowledged by the broker")
    dead_letters: int = counter("", "facestream_dead_letters", "Frames dead-lettered and acknowledged")
    dead_letter_reasons: dict = counter(
        "",
        "facestream_dead_letters_by_reason",
        "Frames dead-lettered, by why: key, schema, limits, decode",
        ("reason",),
    )
    skipped_old: dict = counter(
        "", "facestream_frames_skipped", "Frames skipped as older than --max-frame-age-s, by camera", ("camera",)
    )
    skipped_nth: dict = counter(
        "", "facestream_frames_passed_over", "Frames not processed because of --every-nth, by camera", ("camera",)
    )
    skipped_rate: dict = counter(
        "", "facestream_frames_over_rate", "Frames skipped to keep within --max-fps-per-camera, by camera", ("camera",)
    )
    dropped_revoked: int = counter(
        "",
        "facestream_dropped_revoked",
        "Outcomes dropped because their partition was revoked while in flight (the new owner answers them)",
    )
    batches: int = counter("", "facestream_batches", "Batches inferred")
    slow_batches: int = counter(
        "",
        "facestream_slow_batches",
        "Batches that ran over a quarter of max.poll.interval.ms (polled with partitions paused meanwhile)",
    )
    new_consumers: int = counter(
        "",
        "facestream_new_consumers",
        "Kafka consumers made anew because the group had not taken this replica back long after the broker",
    )
    faces_embedded: int = counter(
        "",
        "facestream_faces_embedded",
        "Faces embedded (with --embedder): a track's first face, a markedly better one, or one due again",
    )
    faces_carried: int = counter(
        "", "facestream_faces_carried", "Faces sent without an embedding, to take their track's last (with --embedder)"
    )
    decode_s: float = 0.0  # STAGES says what each stage's seconds count
    decode_wait_s: float = 0.0
    embed_s: float = 0.0
    infer_s: float = 0.0
    postprocess_s: float = 0.0
    # Distributions: how late the events are, and how full and how long the batches.
    latency: Histogram = field(
        default_factory=lambda: Histogram(
            "facestream_capture_to_event_seconds",
            "Seconds from a frame's capture to the broker's acknowledgement of its event",
            LATENCY_S,
        )
    )
    batch_size: Histogram = field(
        default_factory=lambda: Histogram("facestream_batch_frames", "Frames in each batch inferred", BATCH_SIZE)
    )
    batch_seconds: Histogram = field(
        default_factory=lambda: Histogram(
            "facestream_batch_seconds",
            "Seconds each batch held this service: decoding it did not hide, inference, embedding, events",
            BATCH_S,
        )
    )
    started: float = field(default_factory=time.monotonic)
    _last_frames: int = 0
    _last_time: float = field(default_factory=time.monotonic)

    def count_event(self, capture_ts_ns: int, sent_ns: int) -> None:
        """An event the broker acknowledged, of a frame captured at ``capture_ts_ns``, handed to the
        Kafka client at ``sent_ns``: its latency ends there, since the acknowledgement is seen only at
        the service's next poll of the client (up to a batch's wait later, which no reader waits)."""
        self.events += 1
        self.latency.observe((sent_ns - capture_ts_ns) / 1e9)

    def add_batch(
        self, frames: int, seconds: dict[str, float], events_s: float, embedded: np.ndarray | None = None
    ) -> None:
        """One batch of ``frames`` done: its time in each stage (``<stage>_s`` names), building its events
        counted as postprocessing; with an embedder, which of its faces were ``embedded``."""
        self.batches += 1
        self.batch_size.observe(frames)
        self.batch_seconds.observe(sum(v for k, v in seconds.items() if k != "decode_s") + events_s)
        if embedded is not None:
            made = int(embedded.sum())
            self.faces_embedded += made
            self.faces_carried += len(embedded) - made
        for name, spent in seconds.items():
            setattr(self, name, getattr(self, name) + spent)
        self.postprocess_s += events_s

    def count_dead_letter(self, reason: str) -> None:
        self.dead_letters += 1
        self.dead_letter_reasons[reason] = self.dead_letter_reasons.get(reason, 0) + 1

    def count_skipped(self, camera_id: str, reason: str = "old") -> int:
        """Count one frame of ``camera_id`` skipped as too old (``reason`` old), over its rate (rate) or
        passed over by --every-nth (nth); return how many of that camera so far, for that reason."""
        counts = {"old": self.skipped_old, "rate": self.skipped_rate, "nth": self.skipped_nth}[reason]
        counts[camera_id] = counts.get(camera_id, 0) + 1
        return counts[camera_id]

    def line(self) -> str:
        now = time.monotonic()
        rate = (self.frames - self._last_frames) / max(now - self._last_time, 1e-9)
        self._last_frames, self._last_time = self.frames, now
        stages = " ".join(f"{name} {ms:.2f}" for name, ms in self.ms_per_frame(digits=2).items())
        provider = f"{self.provider} (FALLBACK)" if self.fallback else self.provider
        decoder = f"{self.decoder} (FALLBACK)" if self.decode_fallback else self.decoder
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(self.dead_letter_reasons.items()))
        return (
            f"frames {self.frames} ({rate:.1f}/s) events {self.events} dead-letters {self.dead_letters}"
            + (f" ({reasons})" if reasons else "")
            + (f" skipped-old {sum(self.skipped_old.values())}" if self.skipped_old else "")
            + (f" skipped-nth {sum(self.skipped_nth.values())}" if self.skipped_nth else "")
            + (f" skipped-rate {sum(self.skipped_rate.values())}" if self.skipped_rate else "")
            + (f" dropped-revoked {self.dropped_revoked}" if self.dropped_revoked else "")
            + (f" slow-batches {self.slow_batches}" if self.slow_batches else "")
            + (
                f" faces embedded {self.faces_embedded} carried {self.faces_carried}"
                if self.faces_embedded or self.faces_carried
                else ""
            )
            + " "
            f"batch avg {self.frames / max(self.batches, 1):.1f} | ms/frame {stages} | provider {provider} "
            f"decoder {decoder}" + (f" | {self.warning}" if self.warning else "")
        )

    def summary(self) -> dict[str, Any]:
        elapsed = time.monotonic() - self.started
        return {
            "frames": self.frames,
            "events": self.events,
            "dead_letters": self.dead_letters,
            "dead_letter_reasons": dict(self.dead_letter_reasons),
            "skipped_old": sum(self.skipped_old.values()),
            "skipped_nth": sum(self.skipped_nth.values()),
            "skipped_rate": sum(self.skipped_rate.values()),
            "dropped_revoked": self.dropped_revoked,
            "batches": self.batches,
            "slow_batches": self.slow_batches,
            "faces_embedded": self.faces_embedded,
            "faces_carried": self.faces_carried,
            "elapsed_s": round(elapsed, 3),
            "frames_per_s": round(self.frames / max(elapsed, 1e-9), 2),
            "ms_per_frame": self.ms_per_frame(),
            "provider": self.provider,
            "decoder": self.decoder,
        }

    def ms_per_frame(self, frames: int | None = None, digits: int = 3) -> dict[str, float]:
        """Milliseconds per frame of every stage, over ``frames`` (default: the frames taken)."""
        count = max(self.frames if frames is None else frames, 1)
        return {name: round(getattr(self, f"{name}_s") * 1000 / count, digits) for name in STAGES}


class StatsReporter:
    """Logs the stats line every ``interval_s`` seconds (0 turns it off)."""

    def __init__(self, stats: Stats, interval_s: float) -> None:
        self.stats = stats
        self.interval_s = interval_s
        self._next = time.monotonic() + interval_s

    def tick(self) -> None:
        if self.interval_s > 0 and time.monotonic() >= self._next:
            self._next = time.monotonic() + self.interval_s
            level = logging.WARNING if self.stats.warning else logging.INFO
            log.log(level, "%s", self.stats.line())
