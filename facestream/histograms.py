"""Histograms a service fills as it works and Prometheus scrapes (``facestream_..._seconds_bucket``):
the distribution of a latency or a batch size, where a counter only gives its sum. The bucket counts
live in numpy, so a batch of values goes in with one call, not a Python step per frame."""

import threading
from collections.abc import Sequence

import numpy as np
from prometheus_client.core import HistogramMetricFamily
from prometheus_client.utils import floatToGoString

# Seconds from a frame's capture to its event, or from an event to its alert: a live system answers
# in tens of milliseconds, a loaded one in seconds, a stalled one in minutes. From 10 ms to 5 s each
# bound is at most 1.33 times the one before, so a p99 read off the buckets (histogram_quantile's
# interpolation) lands close to the one measured per event (`bench e2e` reports both).
LATENCY_S = (
    0.005, 0.01, 0.0125, 0.015, 0.02, 0.025, 0.03, 0.04, 0.05, 0.065, 0.08, 0.1, 0.125, 0.15, 0.2, 0.25,
    0.3, 0.4, 0.5, 0.65, 0.8, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 10.0, 30.0, 60.0, 300.0,
)  # fmt: skip
# Seconds one batch takes through a stage.
BATCH_S = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
# Frames in a batch, up to a GPU owner's largest.
BATCH_SIZE = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)


class Histogram:
    """Counts of values at or under each bound (Prometheus's ``le``), their sum, one family to export."""

    def __init__(self, metric: str, help: str, bounds: Sequence[float]) -> None:
        self.metric, self.help = metric, help
        self.bounds = np.asarray(bounds, np.float64)
        self.counts = np.zeros(len(bounds) + 1, np.int64)  # the last: over the largest bound
        self.total = 0.0
        self._lock = threading.Lock()  # observed on a client's callback thread, read on the scraper's

    def observe(self, values: float | Sequence[float] | np.ndarray) -> None:
        found = np.atleast_1d(np.asarray(values, np.float64))
        placed = np.bincount(np.searchsorted(self.bounds, found, side="left"), minlength=len(self.counts))
        with self._lock:
            self.counts += placed
            self.total += float(found.sum())

    @property
    def count(self) -> int:
        return int(self.counts.sum())

    def quantile(self, q: float) -> float:
        """The ``q`` quantile as Prometheus's histogram_quantile reads these buckets: linear within the
        bucket it falls in (from 0 in the first); inf past the largest bound, nan when empty."""
        with self._lock:
            counts = self.counts.copy()
        return interpolated_quantile(self.bounds, counts, q)

    def family(self, labels: dict[str, str] | None = None) -> HistogramMetricFamily:
        with self._lock:
            cumulative, total = np.cumsum(self.counts), self.total
        buckets = [(floatToGoString(b), int(c)) for b, c in zip(self.bounds, cumulative[:-1], strict=True)]
        buckets.append(("+Inf", int(cumulative[-1])))
        names = list(labels or {})
        family = HistogramMetricFamily(self.metric, self.help, labels=names)
        family.add_metric([labels[n] for n in names] if labels else [], buckets, total)
        return family


def interpolated_quantile(bounds: np.ndarray, counts: np.ndarray, q: float) -> float:
    """histogram_quantile's reading of per-bucket ``counts`` (the last: over the largest bound)."""
    cumulative = np.cumsum(counts)
    if cumulative[-1] == 0:
        return float("nan")
    rank = q * cumulative[-1]
    index = int(np.searchsorted(cumulative, rank, side="left"))
    if index >= len(bounds):
        return float("inf")
    below = cumulative[index - 1] if index else 0
    lower = bounds[index - 1] if index else 0.0
    return float(lower + (bounds[index] - lower) * (rank - below) / max(counts[index], 1))
