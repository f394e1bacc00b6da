"""``facestream dashboard``'s settings, checked where they are given (``facestream.config``)."""

import json
import sys
from dataclasses import dataclass

from facestream.config import check, command_line, parse_topics, setting
from facestream.errors import ConfigError
from facestream.schemas import (
    ALERTS_TOPIC,
    CAMERA_STATUS_TOPIC,
    DETECTIONS_TOPIC,
    FRAMES_TOPIC,
    GALLERY_TOPIC,
    POSES_TOPIC,
)
from facestream.zones import parse_camera_lines, parse_camera_zones


@dataclass(frozen=True)
class DashboardConfig:
    http_host: str = setting(
        "127.0.0.1", "Address to listen on (0.0.0.0: every interface; set --token then).", was="host"
    )
    http_port: int = setting(
        8080, "Port of the page (and of /healthz, /readyz, /metrics).", minimum=1, maximum=65535, was="port"
    )
    token: str = setting(
        "",
        "Access token the page asks for (?token=..., then a cookie); NAME:SECRET names who reviews alerts with it "
        "(else 'operator'); empty: none (reviews by 'anonymous').",
    )
    database: str = setting(
        "", "The alert store's database, for the history: its --database (default $FACESTREAM_HOME/alerts.db)."
    )
    search: bool = setting(
        False,
        "Serve search by face over the sightings the alert store keeps (alert-store --sightings); needs --token; "
        "every search is written to the audit log (docs/search.md).",
    )
    frames_topic: str = setting(FRAMES_TOPIC, "Topics of the camera frames (comma-separated).", parse=parse_topics)
    detections_topic: str = setting(DETECTIONS_TOPIC, "Topic of the detection events.")
    poses_topic: str = setting(POSES_TOPIC, "Topic of the pose events.")
    alerts_topic: str = setting(ALERTS_TOPIC, "Topic of the alerts.")
    status_topic: str = setting(CAMERA_STATUS_TOPIC, "Topic of the producers' camera statuses.")
    gallery_topic: str = setting(GALLERY_TOPIC, "The gallery's compacted topic: shown, and taught from alerts.")
    frame_rate: float = setting(2.0, "Frames per second per camera the page shows at most.", minimum=0.1)
    alerts_kept: int = setting(50, "Alerts the feed keeps (and reads back at start).", minimum=1)
    groups_interval_s: float = setting(
        2.0, "Seconds between reads of the consumer groups and their lag.", minimum=0.5, was="groups_interval"
    )
    zones: dict | None = setting(
        None,
        "Zones drawn on the tiles: camera -> name -> corners, as JSON or [dashboard.zones] tables (default, "
        "with --config: the [alerting.cameras.<camera id>] zones of the same file).",
        parse=parse_camera_zones,
        show=json.dumps,
        metavar="JSON",
    )
    lines: dict | None = setting(
        None,
        "Lines drawn on the tiles: camera -> name -> [[x, y], [x, y]], as JSON or [dashboard.lines] tables "
        "(default, with --config: the [alerting.cameras.<camera id>] lines of the same file).",
        parse=parse_camera_lines,
        show=json.dumps,
        metavar="JSON",
    )

    def __post_init__(self) -> None:
        check(self)
        if self.search and not self.token:
            raise ConfigError("--search needs --token: a search over people's movements is for those who hold it")

    @property
    def frames_topics(self) -> tuple[str, ...]:
        return parse_topics(self.frames_topic)


def dashboard_command(config: DashboardConfig | None = None, **changes) -> list[str]:
    """The command that runs the dashboard with ``config`` (and ``changes``) in a child process."""
    return [sys.executable, "-m", "facestream", "dashboard", *command_line(config or DashboardConfig(), **changes)]
