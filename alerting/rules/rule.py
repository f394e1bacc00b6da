"""What the service knows of a rule, declared once in the rule's own module (``RULE``): its name, its
settings, what it reads and how it is run. The registry (``rules/registry.py``) lists the rules; the
configuration, the camera dispatch, the help texts and the docs' tables are made from it, so a new
rule is its module, its tests and its paragraph in docs/alerting.md."""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from facestream.alerting.rules.camera_settings import CameraSettings
from facestream.alerting.rules.recognition import Match
from facestream.alerting.rules.state import Where
from facestream.gallery import Gallery
from facestream.schemas import Alert

SEES = ("faces", "people", "followed", "statuses")


@dataclass(frozen=True)
class Context:
    """What a rule's step may consult beside its state and the event: the camera's settings, who the
    event's faces are (the worker matches a whole batch at once) and the gallery."""

    settings: CameraSettings
    match: Match
    gallery: Gallery
    tracks: dict[int, str] = field(default_factory=dict)  # id of a face of the event -> its track's name
    followed: bool = False  # the camera follows its faces: one without a track (between followed frames) counts not
    # ids of the faces lent their detector track's embedding (schemas.tracks) where that embedding has
    # voted on the track's name already, at an earlier followed frame (camera._voted)
    voted: frozenset[int] = frozenset()

    def track_of(self, face: object) -> str | None:
        """The name of the track ``face`` (a face of this event, or of the event narrowed to zones) is in."""
        return self.tracks.get(id(face))

    def voted_already(self, face: object) -> bool:
        """Whether ``face``'s embedding (its detector track's, lent) has voted on the track's name already."""
        return id(face) in self.voted


# (rule state, the event as the rule sees it (narrowed to its zones), context, zone of a box) -> alerts
Step = Callable[[dict, Any, Context, Where], list[Alert]]
Close = Callable[[dict, Any, str], list[Alert]]  # (rule state, event, why) -> the ends of its open alerts


@dataclass(frozen=True)
class Rule:
    name: str  # the kind of its alerts, its --rules name, option and config table
    title: str  # in help texts: "Stranger settings for every camera"
    summary: str  # what makes an alert, for `facestream alerting --help`
    settings: type  # its frozen dataclass of settings (facestream.config.setting fields)
    example: str  # a settings example for the help text, as JSON
    # What it reads: "faces" (detection events), "people" (pose events), "followed" (either, as its
    # `follows` setting says) or "statuses" (the producers' camera statuses, run by the worker itself).
    sees: str
    step: Step | None = None  # None for a rule that does not read frames
    close: Close | None = None
    default: bool = True  # run when --rules is not given
    follows_faces: bool = False  # it names each face's track (face_tracks): the camera follows its faces
    per_zone: bool = False  # counts in each of its zones apart (one alert per zone), not over them all

    def __post_init__(self) -> None:
        if self.sees not in SEES:
            raise ValueError(f"rule {self.name}: sees is one of {', '.join(SEES)}, got {self.sees!r}")

    @property
    def frames(self) -> bool:
        """Whether it looks at frames, so that schedules and zones may limit it."""
        return self.sees != "statuses"
