"""Prometheus metrics of an alerting worker, read from its ``AlertingStats`` at scrape time."""

from prometheus_client.core import CounterMetricFamily


class AlertingCollector:
    def __init__(self, stats) -> None:
        self.stats = stats

    def collect(self):
        s = self.stats
        for name, help_text, value in (
            ("facestream_alerting_detection_events", "Detection events read", s.events),
            ("facestream_alerting_pose_events", "Pose events read", s.poses),
            (
                "facestream_alerting_camera_statuses",
                "Camera status records read (the camera_offline rule's)",
                s.statuses,
            ),
            ("facestream_alerting_duplicates", "Records at or before the last one seen for their camera", s.duplicates),
            ("facestream_alerting_unreadable", "Events that failed their schema", s.unreadable),
            (
                "facestream_alerting_faces_lent",
                "Faces without an embedding given their detector track's last one",
                s.faces_lent,
            ),
        ):
            yield CounterMetricFamily(name, help_text, value=value)
        dead = CounterMetricFamily(
            "facestream_alerting_dead_letters",
            "Records dead-lettered by stage: read (unreadable), rule, handle (failed on it), send (refused)",
            labels=["stage"],
        )
        for stage, count in sorted(s.dead_letters.items()):
            dead.add_metric([stage], count)
        yield dead
        alerts = CounterMetricFamily(
            "facestream_alerts", "Alert records sent, by kind and state", labels=["kind", "state"]
        )
        for key, count in sorted(s.alerts.items()):
            alerts.add_metric(key.split(" ", 1), count)
        yield alerts
