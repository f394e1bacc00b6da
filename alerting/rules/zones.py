"""Zones: named polygons of a camera's picture that a rule can be limited to.

A zone is three or more corners ``[x, y]`` in coordinates normalised to the frame (0 to 1, left to
right and top to bottom), so one zone fits every resolution a camera sends. A rule limited to zones
sees only the faces or people whose reference point lies in one of them: a face's is the centre of
its box; a person's is the middle of the bottom edge of their box, where they stand (a person whose
head crosses into a zone while they stand outside it is not in it). A point on a zone's edge counts
as inside. Zones may overlap: a thing in two is named by the first of them, in the order configured
(an alert names the zone its face or person was in when it opened).
"""

from collections.abc import Callable
from dataclasses import replace

from facestream.alerting.rules.state import Where
from facestream.schemas import DetectionEvent, PoseEvent
from facestream.zones import Zones, inside

Box = tuple[float, float, float, float] | list[float]
Point = Callable[[Box], tuple[float, float]]  # a box -> its reference point, in frame pixels


def face_point(box: Box) -> tuple[float, float]:
    """A face is where the centre of its box is."""
    return (box[0] + box[2]) / 2, (box[1] + box[3]) / 2


def feet_point(box: Box) -> tuple[float, float]:
    """A person is where they stand: the middle of their box's bottom edge."""
    return (box[0] + box[2]) / 2, box[3]


def zone_of(zones: Zones, event: DetectionEvent | PoseEvent, point: Point) -> Where:
    """For boxes of ``event``'s frame: the first of ``zones`` holding the box's reference point."""

    def named(box: Box) -> str | None:
        x, y = point(box)
        x, y = x / event.width, y / event.height
        return next((name for name, polygon in zones.items() if inside(polygon, x, y)), None)

    return named


def faces_in(event: DetectionEvent, zones: Zones) -> DetectionEvent:
    """``event`` with only the faces whose box centre lies in one of ``zones``."""
    named = zone_of(zones, event, face_point)
    kept = tuple(face for face in event.faces if named(face.box) is not None)
    return event if len(kept) == len(event.faces) else replace(event, faces=kept)


def people_in(event: PoseEvent, zones: Zones) -> PoseEvent:
    """``event`` with only the people whose feet lie in one of ``zones``."""
    named = zone_of(zones, event, feet_point)
    kept = tuple(person for person in event.persons if named(person.box) is not None)
    return event if len(kept) == len(event.persons) else replace(event, persons=kept)
