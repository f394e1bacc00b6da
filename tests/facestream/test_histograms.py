"""Histograms as Prometheus reads them: cumulative counts per ``le`` bound, the sum, the count."""

import numpy as np
import pytest
from prometheus_client import CollectorRegistry, generate_latest

from facestream.histograms import Histogram


def test_values_fall_in_the_bucket_of_the_first_bound_they_do_not_pass() -> None:
    histogram = Histogram("facestream_test_seconds", "A test's latencies", (0.1, 1.0, 10.0))
    histogram.observe(np.array([0.05, 0.1, 0.5, 1.0, 3.0]))
    histogram.observe(60.0)
    assert histogram.counts.tolist() == [2, 2, 1, 1] and histogram.count == 6
    # histogram_quantile's reading: the middle value falls in (0.1, 1], half way through its two
    assert histogram.quantile(0.5) == pytest.approx(0.55) and histogram.quantile(0.99) == float("inf")

    class One:
        def collect(self):
            yield histogram.family({"service": "test"})

    registry = CollectorRegistry()
    registry.register(One())
    text = generate_latest(registry).decode()
    assert 'facestream_test_seconds_bucket{le="0.1",service="test"} 2.0' in text
    assert 'facestream_test_seconds_bucket{le="10.0",service="test"} 5.0' in text
    assert 'facestream_test_seconds_bucket{le="+Inf",service="test"} 6.0' in text
    assert 'facestream_test_seconds_count{service="test"} 6.0' in text
    assert 'facestream_test_seconds_sum{service="test"} 64.65' in text


def test_an_empty_histogram_exports_zeros_and_has_no_quantile() -> None:
    histogram = Histogram("facestream_test_frames", "Frames", (1, 2))
    assert np.isnan(histogram.quantile(0.5))
    family = histogram.family()
    assert [s.value for s in family.samples if s.name.endswith("_count")] == [0]
