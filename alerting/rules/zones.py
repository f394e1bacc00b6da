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

Polygon = tuple[tuple[float, float], ...]
Zones = dict[str, Polygon]  # name -> corners, in the order configured
Box = tuple[float, float, float, float] | list[float]
Point = Callable[[Box], tuple[float, float]]  # a box -> its reference point, in frame pixels


def face_point(box: Box) -> tuple[float, float]:
    """A face is where the centre of its box is."""
    return (box[0] + box[2]) / 2, (box[1] + box[3]) / 2


def feet_point(box: Box) -> tuple[float, float]:
    """A person is where they stand: the middle of their box's bottom edge."""
    return (box[0] + box[2]) / 2, box[3]


def parse_zones(value: object) -> Zones:
    """``{"door": [[0.1, 0.5], [0.6, 0.5], [0.6, 1.0]]}`` -> name -> corners; ValueError says what is wrong."""
    if not isinstance(value, dict):
        raise ValueError(
            f'zones are a table of name -> corners, e.g. {{"door": [[0, 0.5], [1, 0.5], [1, 1]]}}, got {value!r}'
        )
    zones = {}
    for name, corners in value.items():
        if not isinstance(corners, list) or len(corners) < 3:
            raise ValueError(f"zone {name!r} needs three or more corners [x, y], got {corners!r}")
        points = []
        for corner in corners:
            if (
                not isinstance(corner, list | tuple)
                or len(corner) != 2
                or not all(isinstance(v, int | float) and not isinstance(v, bool) and 0 <= v <= 1 for v in corner)
            ):
                raise ValueError(f"zone {name!r}: a corner is [x, y] with both in 0..1 (of the frame), got {corner!r}")
            points.append((float(corner[0]), float(corner[1])))
        zones[name] = tuple(points)
    return zones


def inside(polygon: Polygon, x: float, y: float) -> bool:
    """Whether (x, y) lies in ``polygon`` or on its edge (even-odd rule)."""
    found = False
    for (x0, y0), (x1, y1) in zip(polygon, polygon[1:] + polygon[:1]):
        if _on_segment(x, y, x0, y0, x1, y1):
            return True
        if (y0 > y) != (y1 > y) and x < x0 + (y - y0) * (x1 - x0) / (y1 - y0):
            found = not found
    return found


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


def _on_segment(x: float, y: float, x0: float, y0: float, x1: float, y1: float) -> bool:
    cross = (x1 - x0) * (y - y0) - (y1 - y0) * (x - x0)
    return abs(cross) <= 1e-12 and min(x0, x1) <= x <= max(x0, x1) and min(y0, y1) <= y <= max(y0, y1)
