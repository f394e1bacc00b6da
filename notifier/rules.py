"""Which alert records a target is told of, and which are held back to keep floods out.

A target names the kinds, cameras and states it wants (``new`` only, unless told), the people (``persons``:
a watched person's name, ``stranger``; ``mute`` the opposite), and the detection score the alert's best
sighting needs (``min_score``: a blurred half-face at 0.6 need not wake anyone).
Of those, a record is held back (and counted, by why) when:

- ``cooldown``: it is a ``new`` alert of a camera and kind whose last message was less than
  ``cooldown_s`` before it (capture time): a stranger walking in and out is one message a minute;
- ``cap``: ``max_per_hour`` messages already went out in the hour before it (capture time);
- ``quiet``: it falls in ``quiet_hours`` (e.g. ``22:00-07:00``) in the target's ``timezone``.

A state target (``mqtt_state``) mirrors what is open rather than telling of news: it takes every record
of its kinds and cameras, holds none back, and learns each camera and kind's open alerts (``track_open``).

The times are the alerts' own, and the state (``decide``'s ``state``, JSON-able) is kept with the
consumer's offsets, so a notifier restarted in the middle decides the same again.
"""

import re
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime, time
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from facestream.config import check, names, setting
from facestream.errors import ConfigError
from facestream.schemas import Alert, SchemaError, person_id_for
from facestream.schemas.alert import STATES
from facestream.schemas.kinds import BY_NAME

NS = 1_000_000_000
HOUR_NS = 3600 * NS


def parse_names(allowed: Collection[str] | None):
    """A Parse for a comma-separated list (of ``allowed`` names, if given: looked up when parsing)."""

    def parse(text: str) -> tuple[str, ...]:
        given = names(text)
        wrong = [n for n in given if allowed is not None and n not in allowed]
        if wrong:
            raise ValueError(f"{', '.join(wrong)}: expected some of {', '.join(allowed or ())}")
        return given

    return parse


def parse_people(text: str) -> tuple[str, ...]:
    """``Joe Biden, stranger`` -> person ids (``joe-biden``) and ``stranger``."""
    try:
        return tuple(person_id_for(name) for name in names(text))
    except SchemaError as exc:
        raise ValueError(str(exc)) from None


def about(alert: Alert) -> str | None:
    """Whom an alert is about: ``stranger``, a watched person's id, or None (crowds, falls, cameras)."""
    if alert.kind == "stranger":
        return "stranger"
    named = [s.person for s in alert.evidence if s.person]
    return person_id_for(named[0]) if named else None


def parse_hours(text: str) -> tuple[time, time] | None:
    """``22:00-07:00`` -> (start, end); empty -> None."""
    if not text:
        return None
    found = re.fullmatch(r"(\d{1,2}):(\d{2})-(\d{1,2}):(\d{2})", text.strip())
    if not found:
        raise ValueError(f"expected HH:MM-HH:MM, e.g. 22:00-07:00, got {text!r}")
    h1, m1, h2, m2 = map(int, found.groups())
    try:
        return time(h1, m1), time(h2, m2)
    except ValueError as exc:
        raise ValueError(f"{text!r}: {exc}") from None


def parse_zone(text: str) -> ZoneInfo:
    try:
        return ZoneInfo(text)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown time zone {text!r} (e.g. UTC, Europe/Berlin)") from None


@dataclass(frozen=True)
class TargetSettings:
    url: str = setting(
        "",
        "Where to send: an Apprise URL (ntfy://, json://, mailto://, mqtt://, tgram://, slack://, ...).",
        parse=lambda v: v,
    )
    kinds: str = setting("", "Kinds sent, comma-separated (empty: all).", parse=parse_names(BY_NAME))
    cameras: str = setting("", "Cameras sent, comma-separated (empty: all).", parse=parse_names(None))
    states: str = setting("new", "States sent, comma-separated: new, update, end.", parse=parse_names(STATES))
    cooldown_s: float = setting(
        60.0,
        "Seconds (capture time) after a message about a camera and kind before its next new alert is sent.",
        minimum=0,
    )
    max_per_hour: int = setting(30, "Messages in any hour (capture time) at most; the rest are held back.", minimum=1)
    quiet_hours: str = setting(
        "", "HH:MM-HH:MM (in timezone) when nothing is sent, e.g. 22:00-07:00.", parse=parse_hours
    )
    timezone: str = setting("UTC", "Time zone of quiet-hours and of the times in messages.", parse=parse_zone)
    persons: str = setting(
        "",
        "Only alerts about these people, comma-separated: names as enrolled (person_seen), stranger; "
        "alerts about nobody in particular (crowd, fall, camera_offline) pass. Empty: everyone.",
        parse=parse_people,
    )
    mute: str = setting("", "Never alerts about these people (names as enrolled, stranger).", parse=parse_people)
    min_score: float = setting(
        0.0,
        "Detection score the alert's best sighting needs (faces, persons); alerts without boxes (crowds) pass.",
        minimum=0,
        maximum=1,
    )
    attach: bool = setting(True, "Attach the alert's snapshot where the target takes images.")
    mqtt_state: bool = setting(
        False,
        "Publish retained MQTT state per camera and kind (Home Assistant, Node-RED) instead of messages; "
        "url mqtt://[USER:PASSWORD@]HOST[:PORT]/PREFIX; every record, no cooldown, cap or quiet hours.",
    )
    discovery_prefix: str = setting(
        "homeassistant", "mqtt_state: Home Assistant's MQTT discovery prefix (empty: no discovery)."
    )

    def __post_init__(self) -> None:
        check(self)
        if not self.url:
            raise ConfigError("a target needs its url")
        if self.mqtt_state and not self.url.startswith(("mqtt://", "mqtts://")):
            raise ConfigError("an mqtt_state target needs an mqtt:// or mqtts:// url")


def wants(alert: Alert, settings: TargetSettings) -> bool:
    """Whether the target asked for this kind, camera and state (and score) at all."""
    chosen = [(settings.kinds, alert.kind), (settings.cameras, alert.camera_id)]
    if not settings.mqtt_state:
        chosen.append((settings.states, alert.state))
    for wanted, value in chosen:
        if names(wanted) and value not in names(wanted):
            return False
    person = about(alert)
    if person is not None and (
        person in parse_people(settings.mute) or person not in (parse_people(settings.persons) or (person,))
    ):
        return False
    scores = [s.score for s in alert.evidence if s.score is not None]
    return settings.mqtt_state or not scores or max(scores) >= settings.min_score


def track_open(state: dict, alert: Alert) -> int:
    """For a state target: remember ``alert`` open (``new``, ``update``) or closed (``end``) in ``state``;
    return how many alerts of its camera and kind are open after it."""
    key = f"{alert.camera_id}/{alert.kind}"
    opened = state.setdefault("open", {})
    ids = set(opened.get(key, []))
    (ids.discard if alert.state == "end" else ids.add)(alert.alert_id)
    if ids:
        opened[key] = sorted(ids)
    else:
        opened.pop(key, None)
    return len(ids)


def decide(state: dict, alert: Alert, settings: TargetSettings) -> str | None:
    """For a record the target wants: None to send it (and remember it in ``state``), else why it is
    held back (``cooldown``, ``cap``, ``quiet``), counted in ``state``."""
    now = alert.updated_ts_ns
    key = f"{alert.camera_id}/{alert.kind}"
    sent = [t for t in state.get("sent", []) if now - t < HOUR_NS]
    why = None
    if alert.state == "new" and now - state.get("last", {}).get(key, -(2**62)) < settings.cooldown_s * NS:
        why = "cooldown"
    elif len(sent) >= settings.max_per_hour:
        why = "cap"
    elif _quiet(now, settings):
        why = "quiet"
    if why is not None:
        held = state.setdefault("held", {})
        held[why] = held.get(why, 0) + 1
        return why
    state["sent"] = [*sent, now]
    if alert.state == "new":
        state.setdefault("last", {})[key] = now
    return None


def _quiet(ts_ns: int, settings: TargetSettings) -> bool:
    hours = parse_hours(settings.quiet_hours)
    if hours is None:
        return False
    local = datetime.fromtimestamp(ts_ns / NS, parse_zone(settings.timezone)).time()
    start, end = hours
    return start <= local < end if start <= end else local >= start or local < end
