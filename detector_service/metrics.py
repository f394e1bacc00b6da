"""Prometheus metrics of the detector: the stats line's counters, plus the active provider and any
fallback or warning, so a dashboard sees a CPU fallback or a random-weights model as plainly as a log.

Values are read from ``Stats`` at scrape time (one set of counters, no double bookkeeping). Counter
families get Prometheus's ``_total`` suffix.
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
        for name, help_text, value in (
            ("facestream_frames", "Frames taken from Kafka (valid or not)", s.frames),
            (
                f"facestream_{self.events}_events",
                f"{self.events.capitalize()} events acknowledged by the broker",
                s.events,
            ),
            ("facestream_dead_letters", "Frames dead-lettered and acknowledged", s.dead_letters),
            ("facestream_batches", "Batches inferred", s.batches),
            (
                "facestream_slow_batches",
                "Batches that ran over a quarter of max.poll.interval.ms (polled with partitions paused meanwhile)",
                s.slow_batches,
            ),
            (
                "facestream_new_consumers",
                "Kafka consumers made anew because the group had not taken this replica back long after the broker",
                s.new_consumers,
            ),
            (
                "facestream_faces_embedded",
                "Faces embedded (with --embedder): a track's first face, a markedly better one, or one due again",
                s.faces_embedded,
            ),
            (
                "facestream_faces_carried",
                "Faces sent without an embedding, to take their track's last (with --embedder)",
                s.faces_carried,
            ),
            (
                "facestream_dropped_revoked",
                "Outcomes dropped because their partition was revoked while in flight (the new owner answers them)",
                s.dropped_revoked,
            ),
        ):
            yield CounterMetricFamily(name, help_text, value=value)
        for name, help_text, label, counts in (
            (
                "facestream_dead_letters_by_reason",
                "Frames dead-lettered, by why: key, schema, limits, decode",
                "reason",
                s.dead_letter_reasons,
            ),
            (
                "facestream_frames_skipped",
                "Frames skipped as older than --max-frame-age-s, by camera",
                "camera",
                s.skipped_old,
            ),
            (
                "facestream_frames_passed_over",
                "Frames not processed because of --every-nth, by camera",
                "camera",
                s.skipped_nth,
            ),
            (
                "facestream_frames_over_rate",
                "Frames skipped to keep within --max-fps-per-camera, by camera",
                "camera",
                s.skipped_rate,
            ),
        ):
            family = CounterMetricFamily(name, help_text, labels=[label])
            for key, count in sorted(counts.items()):
                family.add_metric([key], count)
            yield family
        stages = CounterMetricFamily("facestream_stage_seconds", "Seconds spent per stage", labels=["stage"])
        for name in STAGES:
            stages.add_metric([name], getattr(s, f"{name}_s"))
        yield stages
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
