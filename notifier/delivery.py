"""One sender per target, on a thread of its own: it takes the target's owed messages from the outbox,
hands each to the target's channel (Apprise, or retained MQTT state) with a way to the alert's snapshot,
and marks it sent; a failure is counted, logged by the target's name (its URL masked) and tried again
after a pause that doubles up to ``retry_max_s``. A target that is down holds only its own messages back."""

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from facestream.alertdb.outbox import Outbox, Owed
from facestream.counters import Counters, counter
from facestream.notifier.apprise_target import AppriseTarget
from facestream.notifier.config import masked
from facestream.notifier.mqtt_state import MqttStateTarget
from facestream.notifier.rules import TargetSettings

log = logging.getLogger(__name__)
TAKE = 20  # messages taken from the outbox at a time
IDLE_S = 0.5  # how often an idle sender looks again


class Channel(Protocol):
    def send(self, item: Owed, picture: Callable[[], bytes | None]) -> str | None:
        """None once the target took the record's message(s), else what went wrong."""

    def close(self) -> None: ...


def channel_for(name: str, settings: TargetSettings, dashboard_url: str) -> Channel:
    kind = MqttStateTarget if settings.mqtt_state else AppriseTarget
    return kind(name, settings, dashboard_url)


def retry_pause(attempts: int, retry_max_s: float) -> float:
    """Seconds before a message that failed ``attempts`` times before this failure is tried again:
    1, 2, 4, ... doubling, at most ``retry_max_s`` (a target down for a day is asked every few minutes,
    not every second)."""
    return min(retry_max_s, 2.0 ** min(attempts, 16))


def worth_saying(attempts: int) -> bool:
    """Whether a failure is logged: the first three of a message, then every twentieth (a target down
    for hours would fill the log otherwise; the metrics count every one)."""
    return attempts < 3 or attempts % 20 == 0


@dataclass
class SenderStats(Counters):
    sent: int = counter("sent", "facestream_notify_sent", "Messages a target took")
    failures: int = counter("failed", "facestream_notify_failures", "Failed attempts at a target")
    last_error: str = ""
    busy: bool = field(default=False)  # owes messages it has not sent yet


class Sender:
    def __init__(
        self, name: str, settings: TargetSettings, outbox: Outbox, snapshot, dashboard_url: str, retry_max_s: float
    ) -> None:
        self.name, self.settings, self.outbox = name, settings, outbox
        self.snapshot, self.retry_max_s = snapshot, retry_max_s
        self.channel = channel_for(name, settings, dashboard_url)
        self.stats = SenderStats()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"notify {name}", daemon=True)

    def start(self) -> "Sender":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=30)
        self.channel.close()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                owed = self.outbox.due(self.name, TAKE)
                self.stats.busy = bool(owed)
                for item in owed:
                    if self._stop.is_set() or not self._send(item):
                        break  # a failing target: its next due message waits for the pause too
            except Exception:  # the database away, a bug: logged, and tried again; the sender never dies
                log.exception("target %s: sending stopped; trying again in %.0f s", self.name, self.retry_max_s)
                owed = []
                self._stop.wait(self.retry_max_s)
            if not owed:
                self._stop.wait(IDLE_S)

    def _picture(self, alert) -> bytes | None:
        """The alert's snapshot for the target, or None (none kept, or it cannot be read now: sent without)."""
        if not (self.settings.attach and alert.evidence):
            return None
        try:
            return self.snapshot(alert)
        except Exception as exc:  # Kafka or the database away: the message goes without its picture
            log.warning("target %s: no snapshot for alert %s (%s); sending without", self.name, alert.alert_id, exc)
            return None

    def _send(self, item: Owed) -> bool:
        error = self.channel.send(item, lambda: self._picture(item.alert))
        if error is None:
            self.outbox.sent(item.id)
            self.stats.sent += 1
            return True
        pause = retry_pause(item.attempts, self.retry_max_s)
        error = error.replace(self.settings.url, masked(self.settings.url))
        self.outbox.failed(item.id, error, pause)
        self.stats.failures += 1
        self.stats.last_error = error
        if worth_saying(item.attempts):
            log.warning(
                "target %s (%s): %s; trying again in %.0f s", self.name, masked(self.settings.url), error, pause
            )
        return False
