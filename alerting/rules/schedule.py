"""When a rule runs on a camera: hours of given days, in the camera's time zone.

A schedule is windows separated by ``;``, each ``[DAYS ]HH:MM-HH:MM``: ``22:00-06:00`` (every night),
``mon-fri 08:00-18:00; sat 09:00-13:00``, ``sat,sun 00:00-24:00``. DAYS are ``mon`` ... ``sun``, single
or as ranges (``fri-mon`` wraps), comma-separated; without them a window is every day's. A window
that ends at or before its start runs past midnight and belongs to the day it starts on:
``fri 22:00-06:00`` covers Friday 22:00 to Saturday 06:00. Times are wall-clock times where the
camera is (``timezone``), so a window keeps its hours across daylight saving changes.
"""

import re
from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
MINUTES_PER_DAY = 24 * 60
_WINDOW = re.compile(r"^(?:(?P<days>[a-z,\-]+)\s+)?(?P<start>\d{1,2}:\d{2})-(?P<end>\d{1,2}:\d{2})$")


@dataclass(frozen=True)
class Window:
    days: frozenset[int]  # 0 = Monday, as datetime.weekday()
    start: int  # minutes after midnight
    end: int  # minutes after midnight, up to 1440; <= start: the window runs past midnight

    def covers(self, weekday: int, minute: int) -> bool:
        if self.start < self.end:
            return weekday in self.days and self.start <= minute < self.end
        return (weekday in self.days and minute >= self.start) or ((weekday - 1) % 7 in self.days and minute < self.end)


@dataclass(frozen=True)
class Schedule:
    text: str  # as given, for messages and the configuration's display
    windows: tuple[Window, ...]

    @classmethod
    def parse(cls, text: str) -> "Schedule":
        """The schedule ``text`` describes; ValueError says what is wrong with it."""
        windows = tuple(_window(part.strip().lower()) for part in text.split(";") if part.strip())
        if not windows:
            raise ValueError("a schedule needs at least one window, e.g. '22:00-06:00' or 'mon-fri 08:00-18:00'")
        return cls(text, windows)

    def active(self, local: datetime) -> bool:
        """Whether the rule runs at ``local``, a time in the camera's time zone."""
        weekday, minute = local.weekday(), local.hour * 60 + local.minute
        return any(window.covers(weekday, minute) for window in self.windows)


def time_zone(name: str) -> ZoneInfo:
    """The IANA time zone ``name`` (e.g. ``Europe/Berlin``); ValueError if there is none of that name."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):  # OSError: a name too long for a file
        raise ValueError(f"unknown time zone {name!r}; use an IANA name such as 'UTC' or 'Europe/Berlin'") from None


def _window(text: str) -> Window:
    found = _WINDOW.match(text)
    if found is None:
        raise ValueError(f"a schedule window is '[DAYS ]HH:MM-HH:MM' (e.g. 'mon-fri 22:00-06:00'), got {text!r}")
    start, end = _minute(found["start"]), _minute(found["end"])
    if start == MINUTES_PER_DAY:
        raise ValueError(f"a window starts before 24:00, got {text!r}")
    if start == end:
        raise ValueError(f"a window's start and end differ (00:00-24:00 is a whole day), got {text!r}")
    days = _days(found["days"]) if found["days"] else frozenset(range(7))
    return Window(days, start, end)


def _minute(text: str) -> int:
    hours, minutes = map(int, text.split(":"))
    if minutes > 59 or hours > 24 or (hours == 24 and minutes):
        raise ValueError(f"a time of day is 00:00 to 24:00, got {text!r}")
    return hours * 60 + minutes


def _days(text: str) -> frozenset[int]:
    """``mon-fri,sun`` -> {0, 1, 2, 3, 4, 6}; a range may wrap past Sunday (``fri-mon``)."""
    days: set[int] = set()
    for part in text.split(","):
        first, _, last = part.partition("-")
        if first not in DAYS or (last and last not in DAYS):
            raise ValueError(f"days are {', '.join(DAYS)}, single or as ranges (mon-fri), got {part!r}")
        start, stop = DAYS.index(first), DAYS.index(last or first)
        days.update((start + i) % 7 for i in range((stop - start) % 7 + 1))
    return frozenset(days)
