"""A target reached through Apprise (ntfy, Slack, Telegram, e-mail, webhooks, MQTT, ...): each record a
message in words (``message``), with the alert's snapshot attached where the target takes images."""

import logging
import tempfile
from collections.abc import Callable
from pathlib import Path

from facestream.alertdb.outbox import Owed
from facestream.errors import ConfigError
from facestream.notifier import message
from facestream.notifier.config import masked
from facestream.notifier.rules import TargetSettings, parse_zone


class AppriseTarget:
    def __init__(self, name: str, settings: TargetSettings, dashboard_url: str) -> None:
        import apprise

        self.apprise = apprise.Apprise()
        if not self.apprise.add(settings.url):
            raise ConfigError(f"target {name}: Apprise does not take the URL {masked(settings.url)}")
        self.zone, self.dashboard_url = parse_zone(settings.timezone), dashboard_url

    def send(self, item: Owed, picture: Callable[[], bytes | None]) -> str | None:
        """None once the target took the message, else what went wrong (Apprise's last warning)."""
        import apprise

        alert = item.alert
        with tempfile.TemporaryDirectory() as folder, apprise.LogCapture(level=logging.WARNING) as said:
            attach = None
            jpeg = picture()
            if jpeg:
                attach = str(Path(folder) / f"{alert.alert_id}.jpg")
                Path(attach).write_bytes(jpeg)
            ok = self.apprise.notify(
                title=message.title(alert), body=message.body(alert, self.zone, self.dashboard_url), attach=attach
            )
            lines = said.getvalue().strip().splitlines()
        return None if ok else (lines[-1] if lines else "not delivered")

    def close(self) -> None:
        pass
