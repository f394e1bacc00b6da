"""``facestream alert-store``'s settings, with their defaults and checks in one place (``facestream.config``)."""

import sys
from dataclasses import dataclass

from facestream.alertdb import SAME_STRANGER
from facestream.config import (
    check,
    command_line,
    http_host_setting,
    http_port_setting,
    names,
    session_timeout,
    setting,
    stats_interval_setting,
    stop_after_idle_setting,
)
from facestream.schemas import ALERTS_TOPIC, DETECTIONS_TOPIC, FRAMES_TOPIC

DEAD_LETTER_TOPIC = "alerts.dlq"


@dataclass(frozen=True)
class AlertStoreConfig:
    database: str = setting(
        "", "Database URL: sqlite:///PATH or postgresql://USER:PASSWORD@HOST/DB (default: $FACESTREAM_HOME/alerts.db)."
    )
    group: str = setting("facestream-alert-store", "Kafka consumer group (its offsets live in the database).")
    alerts_topic: str = setting(ALERTS_TOPIC, "Topic the alerts come from.")
    dead_letter_topic: str = setting(DEAD_LETTER_TOPIC, "Topic unreadable alert records go to, with why.")
    frames_topic: str = setting(FRAMES_TOPIC, "Topics of the frames snapshots are read back from (comma-separated).")
    sightings: bool = setting(
        False,
        "Also keep every face with an embedding from the detections topic (a sighting), for search by face "
        "(docs/search.md).",
    )
    detections_topic: str = setting(DETECTIONS_TOPIC, "Topic the sightings come from (with --sightings).")
    sightings_days: float = setting(7.0, "Sightings captured longer ago than this are forgotten.", minimum=0.001)
    max_sightings: int = setting(
        10_000_000, "Sightings kept at most; beyond it the oldest are forgotten first.", minimum=1
    )
    same_stranger: float = setting(
        SAME_STRANGER,
        "Cosine similarity of two stranger alerts' faces from which they are visits of one recurring stranger "
        "(unknown-N).",
        minimum=-1,
        maximum=1,
    )
    batch: int = setting(500, "Records kept per transaction at most.", minimum=1)
    retention_days: float = setting(30.0, "Alerts last updated longer ago than this are forgotten.", minimum=0.001)
    snapshot_days: float = setting(
        30.0, "Evidence frames (snapshots) stored longer ago than this are dropped; the alert stays.", minimum=0.001
    )
    audit_days: float = setting(
        365.0, "Audit records (who looked at which face) older than this are deleted.", minimum=0.001
    )
    max_snapshot_mb: float = setting(
        2048.0, "The snapshots' images take at most this much; the oldest images go first.", minimum=0
    )
    prune_every_s: float = setting(300.0, "Seconds between retention passes.", minimum=1)
    stats_interval_s: float = stats_interval_setting(10.0)
    http_port: int = http_port_setting("database open, partitions assigned")
    http_host: str = http_host_setting()
    stop_after_idle_s: float | None = stop_after_idle_setting("records")
    session_timeout_s: float = session_timeout("store")

    def __post_init__(self) -> None:
        check(self)

    @property
    def frames_topics(self) -> tuple[str, ...]:
        return names(self.frames_topic)

    @property
    def topics(self) -> tuple[str, ...]:
        """What the store reads: the alerts, and the detections when it keeps sightings."""
        return (self.alerts_topic, self.detections_topic) if self.sightings else (self.alerts_topic,)


def alert_store_command(config: AlertStoreConfig | None = None, **changes) -> list[str]:
    """The command that runs the alert store with ``config`` (and ``changes``) in a child process."""
    return [sys.executable, "-m", "facestream.alert_store", *command_line(config or AlertStoreConfig(), **changes)]
