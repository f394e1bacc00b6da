"""``facestream notify``'s settings: its group and topics, and the targets with their rules
(``[notify.targets.<name>]`` tables in the config file), each checked where it is given."""

import json
import sys
from dataclasses import dataclass

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
    tables_of,
)
from facestream.errors import ConfigError
from facestream.notifier.rules import TargetSettings
from facestream.schemas import ALERTS_TOPIC, FRAMES_TOPIC


@dataclass(frozen=True)
class NotifierConfig:
    targets: dict | None = setting(
        None,
        'Where alerts go and under which rules, as JSON (e.g. {"phone": {"url": "ntfy://host/topic"}}) or '
        "[notify.targets.<name>] tables; see docs/alerting.md.",
        parse=tables_of(TargetSettings, "target"),
        show=json.dumps,
        metavar="JSON",
    )
    group: str = setting("facestream-notifier", "Kafka consumer group (its offsets live in the database).")
    alerts_topic: str = setting(ALERTS_TOPIC, "Topic the alerts come from.")
    database: str = setting("", "Database of the outbox (the alert store's; default $FACESTREAM_HOME/alerts.db).")
    dashboard_url: str = setting("", "The dashboard's address, for a link to each alert (e.g. http://nvr:8080).")
    frames_topic: str = setting(FRAMES_TOPIC, "Topics a snapshot is read back from when the store has none.")
    retry_max_s: float = setting(300.0, "The longest pause between attempts at a target that fails.", minimum=1)
    batch: int = setting(500, "Records decided per transaction at most.", minimum=1)
    stats_interval_s: float = stats_interval_setting(10.0)
    http_port: int = http_port_setting("partitions assigned")
    http_host: str = http_host_setting()
    stop_after_idle_s: float | None = stop_after_idle_setting("records (then up to a minute for what is owed)")
    session_timeout_s: float = session_timeout("notifier")

    def __post_init__(self) -> None:
        check(self)
        if not self.targets:
            raise ConfigError('--targets names at least one target, e.g. {"phone": {"url": "ntfy://host/topic"}}')

    def target_settings(self) -> dict[str, TargetSettings]:
        return {
            name: TargetSettings(**{k.replace("-", "_"): v for k, v in fields.items()})
            for name, fields in (self.targets or {}).items()
        }

    @property
    def frames_topics(self) -> tuple[str, ...]:
        return names(self.frames_topic)


def masked(url: str) -> str:
    """An Apprise URL as logs show it: its scheme only (its tokens may be anywhere in it)."""
    return f"{url.partition('://')[0]}://***"


def notifier_command(config: NotifierConfig, **changes) -> list[str]:
    """The command that runs the notifier with ``config`` (and ``changes``) in a child process."""
    return [sys.executable, "-m", "facestream.notifier", *command_line(config, **changes)]
