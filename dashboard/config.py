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
    http_host: str = setting("127.0.0.1", "Address to listen on (0.0.0.0: every interface).", was="host")
    http_port: int = setting(
        8080, "Port of the page (and of /healthz, /readyz, /metrics).", minimum=1, maximum=65535, was="port"
    )
    trusted_proxies: str = setting(
        "",
        "Addresses or networks of reverse proxies (comma-separated) whose X-Forwarded-For gives the client's "
        "address and whose --user-header names the signed-in user (an identity-aware proxy); empty: none.",
    )
    user_header: str = setting(
        "",
        "Header in which a trusted proxy names the user (e.g. Remote-User); the name must have an account "
        "(`facestream users add`), whose role applies; empty: no proxy sign-in.",
    )
    database: str = setting(
        "", "The alert store's database, for the history: its --database (default $FACESTREAM_HOME/alerts.db)."
    )
    search: bool = setting(
        False,
        "Serve search by face over the sightings the alert store keeps (alert-store --sightings), to the role "
        "identity; every search is written to the audit log (docs/search.md).",
    )
    blur_unwatched: bool = setting(
        False,
        "For the role viewer, pixelate every face that is not a watched person's, in frames, evidence, "
        "snapshots and clips (the other roles see them as they are).",
    )
    watch_threshold: float = setting(
        0.5,
        "Cosine similarity to a watched person's enrolled faces at which a face stays sharp for viewers "
        "(as the person_seen rule's match-threshold).",
        minimum=-1,
        maximum=1,
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
        if self.user_header and not self.trusted_proxies:
            raise ConfigError("--user-header needs --trusted-proxies: only a trusted proxy may name the user")

    @property
    def trusted_proxies_list(self) -> tuple[str, ...]:
        return tuple(p.strip() for p in self.trusted_proxies.split(",") if p.strip())

    @property
    def frames_topics(self) -> tuple[str, ...]:
        return parse_topics(self.frames_topic)


def dashboard_command(config: DashboardConfig | None = None, **changes) -> list[str]:
    """The command that runs the dashboard with ``config`` (and ``changes``) in a child process."""
    return [sys.executable, "-m", "facestream", "dashboard", *command_line(config or DashboardConfig(), **changes)]
