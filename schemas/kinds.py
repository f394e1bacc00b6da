"""The kinds of alert, one row each. Whatever a reader needs to know of a kind lives here, so that a new
rule's kind is its row: the contract accepts it (``schemas.alert``), the notifier titles and words it
and gives Home Assistant its sensor, ``facestream alerts`` describes it, the dashboard's history lists
it (``GET /api/kinds``) and docs/alerting.md's table of kinds is ``markdown_table()``."""

from dataclasses import dataclass
from typing import Any

# Home Assistant's binary sensor device classes (an open alert turns its camera's sensor on).
DEVICE_CLASSES = (
    "battery", "battery_charging", "carbon_monoxide", "cold", "connectivity", "door", "garage_door", "gas",
    "heat", "light", "lock", "moisture", "motion", "moving", "occupancy", "opening", "plug", "power",
    "presence", "problem", "running", "safety", "smoke", "sound", "tamper", "update", "vibration", "window",
)  # fmt: skip


@dataclass(frozen=True)
class AlertKind:
    """What one kind of alert is, to the people and programs that read it."""

    name: str  # the alert's ``kind``; its rule's name
    title: str  # a few words for people: "Stranger", "Line crossed"
    count: str  # what ``count`` is, as a phrase with ``{count}`` (and ``{person}`` for kinds that name one)
    names_person: bool = False  # its sightings name the enrolled person they are (``person``)
    tracked: bool = False  # its sightings carry the face track they belong to (``track``)
    device_class: str = "problem"  # Home Assistant's binary sensor class for "one is open"
    pictured: bool = True  # its alerts carry evidence frames, so a snapshot

    def __post_init__(self) -> None:
        if not self.name.isidentifier() or not self.name.islower() or len(self.name) > 32:
            raise ValueError(f"alert kind {self.name!r}: lower-case letters, digits and _, at most 32")
        if self.device_class not in DEVICE_CLASSES:
            raise ValueError(f"alert kind {self.name}: device_class is one of {', '.join(DEVICE_CLASSES)}")
        if "{person}" in self.count and not self.names_person:
            raise ValueError(f"alert kind {self.name}: only a kind that names a person says {{person}}")

    def words(self, count: int, person: str | None) -> str:
        """``count`` in words: "up to 7 faces at once"."""
        return self.count.format(count=count, person=person or "someone")

    def fields(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "count": self.count,
            "names_person": self.names_person,
            "tracked": self.tracked,
            "device_class": self.device_class,
            "pictured": self.pictured,
        }


ALERT_KINDS: tuple[AlertKind, ...] = (
    AlertKind(
        "stranger", "Stranger", "an unknown person, seen in {count} frame(s)", tracked=True, device_class="occupancy"
    ),
    AlertKind("crowd", "Crowd", "up to {count} faces at once", device_class="occupancy"),
    AlertKind("fall", "Fall", "{count} person(s) down", device_class="safety"),
    AlertKind("camera_offline", "Camera offline", "{count} failed attempt(s) to reach it", pictured=False),
    AlertKind(
        "person_seen",
        "Watched person",
        "{person}, on the watchlist, seen in {count} frame(s)",
        names_person=True,
        tracked=True,
        device_class="presence",
    ),
    AlertKind("loitering", "Loitering", "someone there for {count} s", device_class="occupancy"),
    AlertKind("line", "Line crossed", "{count} crossing(s)", device_class="motion"),
)
KINDS = tuple(kind.name for kind in ALERT_KINDS)
BY_NAME = {kind.name: kind for kind in ALERT_KINDS}


def kind_of(name: str) -> AlertKind:
    """The row of a kind the contract accepts (KeyError for any other)."""
    return BY_NAME[name]


def markdown_table() -> str:
    """docs/alerting.md's table of kinds (``tests/test_docs.py`` checks that the docs hold it)."""
    rows = [
        "| kind | title | `count` | names a person | face track | Home Assistant class | picture |",
        "|---|---|---|---|---|---|---|",
    ]
    for kind in ALERT_KINDS:
        flags = ["yes" if flag else "" for flag in (kind.names_person, kind.tracked)]
        rows.append(
            f"| `{kind.name}` | {kind.title} | {kind.count} | {flags[0]} | {flags[1]} | {kind.device_class} | "
            f"{'yes' if kind.pictured else ''} |"
        )
    return "\n".join(rows)
