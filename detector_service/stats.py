"""Counters of the detector service and the periodic stats line that shows them."""

import logging
import time
from dataclasses import dataclass, field

log = logging.getLogger(__name__)


@dataclass
class Stats:
    provider: str
    fallback: bool
    warning: str | None = None  # repeated on every stats line (e.g. random weights)
    decoder: str = "cpu"  # where JPEGs are decoded: "gpu" (nvImageCodec) or "cpu" (thread pool)
    decode_fallback: bool = False  # on the CPU although inference runs on a GPU
    frames: int = 0  # frames taken from Kafka (valid or not)
    events: int = 0  # events acknowledged by the broker
    dead_letters: int = 0  # records acknowledged on the dead-letter topic
    batches: int = 0
    decode_s: float = 0.0  # decoding + letterboxing, in its own thread (mostly hidden behind inference)
    preprocess_s: float = 0.0  # waiting for decoding that inference did not hide
    infer_s: float = 0.0
    postprocess_s: float = 0.0
    started: float = field(default_factory=time.monotonic)
    _last_frames: int = 0
    _last_time: float = field(default_factory=time.monotonic)

    def line(self) -> str:
        now = time.monotonic()
        rate = (self.frames - self._last_frames) / max(now - self._last_time, 1e-9)
        self._last_frames, self._last_time = self.frames, now
        per_frame = 1000.0 / max(self.frames, 1)
        provider = f"{self.provider} (FALLBACK)" if self.fallback else self.provider
        decoder = f"{self.decoder} (FALLBACK)" if self.decode_fallback else self.decoder
        return (
            f"frames {self.frames} ({rate:.1f}/s) events {self.events} dead-letters {self.dead_letters} "
            f"batch avg {self.frames / max(self.batches, 1):.1f} | ms/frame decode {self.decode_s * per_frame:.2f} "
            f"decode-wait {self.preprocess_s * per_frame:.2f} "
            f"infer {self.infer_s * per_frame:.2f} post {self.postprocess_s * per_frame:.2f} | provider {provider} "
            f"decode {decoder}" + (f" | {self.warning}" if self.warning else "")
        )

    def summary(self) -> dict[str, float | int | str]:
        elapsed = time.monotonic() - self.started
        return {
            "frames": self.frames,
            "events": self.events,
            "dead_letters": self.dead_letters,
            "batches": self.batches,
            "elapsed_s": round(elapsed, 3),
            "frames_per_s": round(self.frames / max(elapsed, 1e-9), 2),
            "ms_per_frame": {
                "decode": round(self.decode_s * 1000 / max(self.frames, 1), 3),
                "decode_wait": round(self.preprocess_s * 1000 / max(self.frames, 1), 3),
                "infer": round(self.infer_s * 1000 / max(self.frames, 1), 3),
                "postprocess": round(self.postprocess_s * 1000 / max(self.frames, 1), 3),
            },
            "provider": self.provider,
            "decoder": self.decoder,
        }


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
