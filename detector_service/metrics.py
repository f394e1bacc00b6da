"""Prometheus metrics of the detector: the stats line's counters, plus the active provider and any
fallback or warning, so a dashboard sees a CPU fallback or a random-weights model as plainly as a log.

Values are read from ``Stats`` at scrape time: its counters as they are declared there
(``facestream.counters``), the stages' seconds and the gauges here. Counter families get Prometheus's
``_total`` suffix.
"""

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from facestream.detector_service.stats import STAGES, Stats


class StatsCollector:
    """``events``: what the service makes, ``detection`` or ``pose``; its events counter is named for it."""

    def __init__(self, stats: Stats, model: str, events: str = "detection") -> None:
        self.stats = stats
        self.model = model
        self.events = events

    def collect(self):
        s = self.stats
        yield from s.collect(events=self.events, Events=self.events.capitalize())
        stages = CounterMetricFamily("facestream_stage_seconds", "Seconds spent per stage", labels=["stage"])
        for name in STAGES:
            stages.add_metric([name], getattr(s, f"{name}_s"))
        yield stages
        for histogram in (s.latency, s.batch_size, s.batch_seconds):
            yield histogram.family()
        provider = GaugeMetricFamily(
            "facestream_inference_provider",
            "1 for the execution provider that runs the model; fallback=true when a better one in the chain could not",
            labels=["provider", "fallback", "model"],
        )
        provider.add_metric([s.provider, str(s.fallback).lower(), self.model], 1)
        yield provider
        decoder = GaugeMetricFamily(
            "facestream_decoder",
            "1 for where JPEG frames are decoded (gpu or cpu); "
            "fallback=true when on the CPU although inference runs on a GPU, or on the GPU but not set up as "
            "the default (--gpu-decoder) asks",
            labels=["decoder", "fallback"],
        )
        decoder.add_metric([s.decoder, str(s.decode_fallback).lower()], 1)
        yield decoder
        warning = GaugeMetricFamily(
            "facestream_warning", "1 while a warning holds (e.g. random weights)", labels=["warning"]
        )
        if s.warning:
            warning.add_metric([s.warning], 1)
        yield warning
