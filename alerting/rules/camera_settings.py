"""What one camera runs: its rules, each rule's settings, schedules, time zone, zones and lines, as
the configuration resolved them (``AlertingConfig.for_camera``); the rules read it, never the
configuration itself."""

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar
from zoneinfo import ZoneInfo

from facestream.alerting.rules.schedule import Schedule
from facestream.zones import Line, Zones

T = TypeVar("T")


@dataclass(frozen=True)
class CameraSettings:
    """The rules and settings one camera runs with: the service's, with the camera's overrides."""

    rules: tuple[str, ...]
    rule_settings: dict[type, Any]  # each rule's settings, by their class
    schedules: dict[str, Schedule] = field(default_factory=dict)
    timezone: ZoneInfo = field(default_factory=lambda: ZoneInfo("UTC"))
    zones: dict[str, Zones] = field(default_factory=dict)  # rule -> the zones it is limited to
    lines: dict[str, Line] = field(default_factory=dict)  # the line rule's lines, by name
    names_tracks: bool = False  # it runs a rule whose sightings name face tracks: its faces are followed

    def of(self, kind: type[T]) -> T:
        """The settings of the rule whose settings class is ``kind`` (e.g. ``CrowdSettings``)."""
        return self.rule_settings[kind]

    def where(self, rule: str) -> Zones | None:
        """The zones ``rule`` is limited to on this camera, or None: the whole frame."""
        return self.zones.get(rule)

    def off(self, rule: str, at_ns: int) -> str | None:
        """None if the camera runs ``rule`` at ``at_ns`` (ns since the epoch), else why not."""
        if rule not in self.rules:
            return f"the camera no longer runs the {rule} rule"
        schedule = self.schedules.get(rule)
        if schedule is not None and not schedule.active(datetime.fromtimestamp(at_ns / 1e9, self.timezone)):
            return f"the {rule} rule is outside its schedule ({schedule.text}, {self.timezone.key})"
        return None
