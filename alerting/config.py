"""The alerting service's configuration: its topics and group, which rules run, and the rules'
settings for every camera or for one camera (``[alerting.cameras.<camera id>]`` in the config file),
each checked where it is given (``facestream.config``)."""

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from facestream.alerting.rules.camera_settings import CameraSettings
from facestream.alerting.rules.face_tracks import FaceTrackSettings
from facestream.alerting.rules.registry import REGISTRY
from facestream.alerting.rules.rule import Rule
from facestream.alerting.rules.schedule import Schedule, time_zone
from facestream.config import (
    check,
    command_line,
    http_host_setting,
    http_port_setting,
    json_object,
    parse_start_at,
    setting,
    stats_interval_setting,
    table_of,
    tables_of,
)
from facestream.errors import ConfigError
from facestream.schemas import ALERTS_TOPIC, CAMERA_STATUS_TOPIC, DETECTIONS_TOPIC, GALLERY_TOPIC, POSES_TOPIC
from facestream.zones import Zones, parse_lines, parse_zones

RULES = tuple(rule.name for rule in REGISTRY)
# Rules that are asked for (loitering, line) mean little without zones, lines and a dwell time chosen.
DEFAULT_RULES = tuple(rule.name for rule in REGISTRY if rule.default)
# Rules that look at frames: schedules and zones may limit them. camera_offline watches the whole camera
# at all hours (and keeps its record of the producer's last word current, which a pause would make look
# like a silence).
FRAME_RULES = tuple(rule.name for rule in REGISTRY if rule.frames)
DEAD_LETTER_TOPIC = "alerting.dlq"
T = TypeVar("T")


def parse_rules(text: str) -> tuple[str, ...]:
    """``stranger,crowd,fall`` -> the rules, each known."""
    rules = tuple(r.strip() for r in text.split(",") if r.strip())
    unknown = [r for r in rules if r not in RULES]
    if unknown or not rules:
        raise ValueError(f"rules are a comma-separated list of {', '.join(RULES)}, got {text!r}")
    return rules


def parse_schedules(text: str) -> dict:
    """``{"stranger": "22:00-06:00"}`` (or a TOML table) -> the same dict, every rule and schedule checked."""
    schedules = json_object(text)
    for rule, schedule in schedules.items():
        if rule not in FRAME_RULES:
            raise ValueError(f"schedules are for the rules {', '.join(FRAME_RULES)}, got {rule!r}")
        if not isinstance(schedule, str):
            raise ValueError(f"the {rule} rule's schedule is text such as '22:00-06:00', got {schedule!r}")
        try:
            Schedule.parse(schedule)
        except ValueError as exc:
            raise ValueError(f"the {rule} rule's schedule: {exc}") from None
    return schedules


def parse_zone_table(text: str) -> dict:
    """Zones as JSON (or a TOML table): name -> [[x, y], ...], checked."""
    value = json_object(text)
    parse_zones(value)
    return value


def parse_line_table(text: str) -> dict:
    """Lines as JSON (or a TOML table): name -> [[x, y], [x, y]], checked."""
    value = json_object(text)
    parse_lines(value)
    return value


def parse_rule_zones(text: str) -> dict:
    """``{"stranger": ["door"]}`` -> the same dict: rules that look at frames, each with zone names."""
    value = json_object(text)
    for rule, names in value.items():
        if rule not in FRAME_RULES:
            raise ValueError(f"rules limited to zones are {', '.join(FRAME_RULES)}, got {rule!r}")
        if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
            raise ValueError(f"the {rule} rule's zones are a list of zone names, got {names!r}")
    return value


def parse_time_zone(text: str) -> str:
    time_zone(text)
    return text


def _schedules_setting(whose: str):
    return setting(
        None,
        f'When rules run {whose}: rule -> hours, as JSON (e.g. {{"stranger": "22:00-06:00"}}) or a '
        "table; a rule without one runs at all hours.",
        parse=parse_schedules,
        show=json.dumps,
        metavar="JSON",
    )


def with_rule_settings(make: Callable[[Rule], Any]) -> Callable[[type[T]], type[T]]:
    """A class decorator (under ``@dataclass``) adding a settings field per rule of the registry,
    named after the rule and made by ``make``: JSON on the command line, a table in the config file."""

    def add(cls: type[T]) -> type[T]:
        for rule in REGISTRY:
            cls.__annotations__[rule.name] = dict | None
            setattr(cls, rule.name, make(rule))
        return cls

    return add


@dataclass(frozen=True)
@with_rule_settings(
    lambda rule: setting(
        None, f"{rule.title} settings for this camera.", parse=table_of(rule.settings), show=json.dumps
    )
)
class CameraOverrides:
    """What one camera changes: its rules, and any rule settings (a field per rule, from the registry)."""

    rules: str | None = setting(None, "The rules this camera runs (default: the service's).", parse=parse_rules)
    schedules: dict | None = _schedules_setting("on this camera (over the service's, rule by rule)")
    timezone: str | None = setting(None, "This camera's time zone (default: the service's).", parse=parse_time_zone)
    zones: dict | None = setting(
        None,
        'Named areas of this camera\'s picture, as JSON (e.g. {"door": [[0, 0.5], [0.4, 0.5], [0.4, 1], [0, 1]]}): '
        "corners [x, y] in 0..1 of the frame.",
        parse=parse_zone_table,
        show=json.dumps,
        metavar="JSON",
    )
    rule_zones: dict | None = setting(
        None,
        'Rules limited to zones on this camera, as JSON (e.g. {"stranger": ["door"]}); others see the whole frame.',
        parse=parse_rule_zones,
        show=json.dumps,
        metavar="JSON",
    )
    lines: dict | None = setting(
        None,
        "Named lines of this camera's picture that the line rule counts crossings of, as JSON (e.g. "
        '{"entrance": [[0.5, 0], [0.5, 1]]}): two points [x, y] in 0..1 of the frame.',
        parse=parse_line_table,
        show=json.dumps,
        metavar="JSON",
    )
    face_tracks: dict | None = setting(
        None,
        "How this camera's faces are followed from frame to frame.",
        parse=table_of(FaceTrackSettings),
        show=json.dumps,
    )

    def __post_init__(self) -> None:
        check(self)
        unknown = {n for names in (self.rule_zones or {}).values() for n in names} - set(self.zones or {})
        if unknown:
            raise ConfigError(f"--rule-zones names zones this camera does not have: {', '.join(sorted(unknown))}")


@dataclass(frozen=True)
@with_rule_settings(
    lambda rule: setting(
        None,
        f"{rule.title} settings for every camera, as JSON (e.g. {rule.example}) or the [alerting.{rule.name}] table.",
        parse=table_of(rule.settings),
        show=json.dumps,
        metavar="JSON",
    )
)
class AlertingConfig:
    group: str = setting(
        "facestream-alerting",
        "Kafka consumer group; workers share it (and its tables' changelog topics start with it).",
    )
    start_at: str = setting(
        "earliest",
        "Where a new group (no commits yet) starts on each input partition: earliest (every retained event, "
        "so alerts of the past are raised too), latest, or a duration back from now (30s, 5m, 2h). An existing "
        "group always resumes from its commits.",
        parse=parse_start_at,
        metavar="WHERE",
    )
    rules: str = setting(
        ",".join(DEFAULT_RULES),
        f"The rules every camera runs (comma-separated; of {', '.join(RULES)}).",
        parse=parse_rules,
    )
    detections_topic: str = setting(DETECTIONS_TOPIC, "Topic the detection events come from.")
    poses_topic: str = setting(POSES_TOPIC, "Topic the pose events come from (the fall rule's).")
    status_topic: str = setting(
        CAMERA_STATUS_TOPIC, "Topic the producers' camera statuses come from (camera_offline's)."
    )
    alerts_topic: str = setting(ALERTS_TOPIC, "Topic the alerts go to.")
    dead_letter_topic: str = setting(
        DEAD_LETTER_TOPIC, "Where records that cannot be read, and alerts that cannot be sent, go, with why."
    )
    gallery_topic: str = setting(GALLERY_TOPIC, "The gallery's compacted topic.")
    schedules: dict | None = _schedules_setting("on every camera")
    timezone: str = setting("UTC", "The cameras' time zone, as schedules read it (IANA name).", parse=parse_time_zone)
    face_tracks: dict | None = setting(
        None,
        'How faces are followed from frame to frame on every camera, as JSON (e.g. {"lost_after_s": 5}) or the '
        "[alerting.face_tracks] table (docs/alerting.md, Tracks).",
        parse=table_of(FaceTrackSettings),
        show=json.dumps,
        metavar="JSON",
    )
    cameras: dict | None = setting(
        None,
        'Per camera: rules and settings, as JSON (e.g. {"gate": {"rules": "stranger"}}) or '
        "[alerting.cameras.<camera id>] tables.",
        parse=tables_of(CameraOverrides, "camera"),
        show=json.dumps,
        metavar="JSON",
    )
    stats_interval_s: float = stats_interval_setting(10.0)
    http_port: int = http_port_setting("gallery loaded, partitions assigned")
    http_host: str = http_host_setting()
    _resolved: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        check(self)

    def for_camera(self, camera_id: str) -> CameraSettings:
        """The camera's settings (made once per camera): each rule's, the service's with the camera's over them."""
        if camera_id not in self._resolved:
            own = (self.cameras or {}).get(camera_id, {})
            rules = {
                rule.settings: rule.settings(**{**(getattr(self, rule.name) or {}), **own.get(rule.name, {})})
                for rule in REGISTRY
            }
            rules[FaceTrackSettings] = FaceTrackSettings(**{**(self.face_tracks or {}), **own.get("face_tracks", {})})
            schedules = {**(self.schedules or {}), **own.get("schedules", {})}
            runs = parse_rules(own.get("rules") or self.rules)
            self._resolved[camera_id] = CameraSettings(
                rules=runs,
                rule_settings=rules,
                schedules={rule: Schedule.parse(text) for rule, text in schedules.items()},
                timezone=time_zone(own.get("timezone") or self.timezone),
                zones=_rule_zones(own),
                lines=parse_lines(own.get("lines") or {}),
                names_tracks=rules[FaceTrackSettings].follow
                and any(rule.follows_faces and rule.name in runs for rule in REGISTRY),
            )
        return self._resolved[camera_id]


def _rule_zones(own: dict) -> dict[str, Zones]:
    """A camera's overrides -> rule -> the zones it is limited to, in the order of the camera's zones."""
    polygons = parse_zones(own.get("zones") or {})
    limits = own.get("rule_zones") or {}
    return {rule: {name: polygon for name, polygon in polygons.items() if name in limits[rule]} for rule in limits}


def alerting_command(config: AlertingConfig | None = None, **changes) -> list[str]:
    """The command that runs an alerting worker with ``config`` (and ``changes``) in a child process."""
    return [sys.executable, "-m", "facestream.alerting", *command_line(config or AlertingConfig(), **changes)]
