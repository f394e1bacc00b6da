"""Zones and lines: named polygons and segments of a camera's picture, in coordinates normalised to the
frame (0 to 1, left to right and top to bottom), so one fits every resolution a camera sends. The
alerting rules limit themselves to zones and count crossings of lines; the dashboard draws both on
the camera's tile."""

import json

from facestream.schemas import ZONE_MAX

Polygon = tuple[tuple[float, float], ...]
Zones = dict[str, Polygon]  # name -> corners, in the order configured
Point = tuple[float, float]
Line = tuple[Point, Point]  # from its first point to its second


def parse_zones(value: object) -> Zones:
    """``{"door": [[0.1, 0.5], [0.6, 0.5], [0.6, 1.0]]}`` -> name -> corners; ValueError says what is wrong."""
    if not isinstance(value, dict):
        raise ValueError(
            f'zones are a table of name -> corners, e.g. {{"door": [[0, 0.5], [1, 0.5], [1, 1]]}}, got {value!r}'
        )
    zones = {}
    for name, corners in value.items():
        _check_name("zone", name)
        if not isinstance(corners, list) or len(corners) < 3:
            raise ValueError(f"zone {name!r} needs three or more corners [x, y], got {corners!r}")
        zones[name] = tuple(_point(f"zone {name!r}: a corner", corner) for corner in corners)
    return zones


def parse_lines(value: object) -> dict[str, Line]:
    """``{"entrance": [[0.5, 0], [0.5, 1]]}`` -> name -> (first point, second point); ValueError says
    what is wrong."""
    if not isinstance(value, dict):
        raise ValueError(
            f'lines are a table of name -> [[x, y], [x, y]], e.g. {{"entrance": [[0.5, 0], [0.5, 1]]}}, got {value!r}'
        )
    lines = {}
    for name, ends in value.items():
        _check_name("line", name)
        if not isinstance(ends, list) or len(ends) != 2:
            raise ValueError(f"line {name!r} is two points [[x, y], [x, y]], got {ends!r}")
        first, second = (_point(f"line {name!r}: a point", end) for end in ends)
        if first == second:
            raise ValueError(f"line {name!r} needs two different points, got {ends!r}")
        lines[name] = (first, second)
    return lines


def crossing(line: Line, before: Point, after: Point) -> int:
    """How a step from ``before`` to ``after`` crosses ``line``: 1 forward, -1 backward, 0 not at all.
    Forward is from the side a quarter turn anticlockwise of the line's direction, as the picture shows
    it, to the other: for a line drawn from top to bottom, from left to right. A step that starts or
    ends exactly on the line does not count (box coordinates make that rare)."""
    (x0, y0), (x1, y1) = line
    side_before = _side(line, before)
    side_after = _side(line, after)
    if side_before == 0 or side_before * side_after >= 0:
        return 0
    # Each end of the line on its own side of the step: the step passes between them, so within the segment.
    step = (before, after)
    if _side(step, (x0, y0)) * _side(step, (x1, y1)) > 0:
        return 0
    return 1 if side_before > 0 else -1


def _side(line: Line, point: Point) -> float:
    """Positive on one side of the line, negative on the other, 0 on it (a cross product)."""
    (x0, y0), (x1, y1) = line
    return (x1 - x0) * (point[1] - y0) - (y1 - y0) * (point[0] - x0)


def _point(what: str, value: object) -> Point:
    if (
        not isinstance(value, list | tuple)
        or len(value) != 2
        or not all(isinstance(v, int | float) and not isinstance(v, bool) and 0 <= v <= 1 for v in value)
    ):
        raise ValueError(f"{what} is [x, y] with both in 0..1 (of the frame), got {value!r}")
    return float(value[0]), float(value[1])


def parse_camera_zones(text: str) -> dict:
    """``{"gate": {"door": [[0, 0.5], ...]}}`` (JSON, or TOML tables) -> the same dict, every camera's zones checked."""
    return _per_camera(text, parse_zones, "zones", '{"gate": {"door": [[0, 0.5], ...]}}')


def parse_camera_lines(text: str) -> dict:
    """``{"gate": {"entrance": [[0.5, 0], [0.5, 1]]}}`` (JSON, or TOML tables) -> the same dict, every
    camera's lines checked."""
    return _per_camera(text, parse_lines, "lines", '{"gate": {"entrance": [[0.5, 0], [0.5, 1]]}}')


def _per_camera(text: str, parse, what: str, example: str) -> dict:
    """camera -> ``what`` as JSON -> the dict, each camera's part checked by ``parse``."""
    try:
        cameras = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"expected camera -> {what} as a JSON object, e.g. {example}: {exc}") from None
    if not isinstance(cameras, dict):
        raise ValueError(f"expected camera -> {what} as a JSON object, got {text!r}")
    for camera, own in cameras.items():
        try:
            parse(own)
        except ValueError as exc:
            raise ValueError(f"camera {camera!r}: {exc}") from None
    return cameras


def inside(polygon: Polygon, x: float, y: float) -> bool:
    """Whether (x, y) lies in ``polygon`` or on its edge (even-odd rule)."""
    found = False
    for (x0, y0), (x1, y1) in zip(polygon, polygon[1:] + polygon[:1]):
        if _on_segment(x, y, x0, y0, x1, y1):
            return True
        if (y0 > y) != (y1 > y) and x < x0 + (y - y0) * (x1 - x0) / (y1 - y0):
            found = not found
    return found


def _on_segment(x: float, y: float, x0: float, y0: float, x1: float, y1: float) -> bool:
    cross = (x1 - x0) * (y - y0) - (y1 - y0) * (x - x0)
    return abs(cross) <= 1e-12 and min(x0, x1) <= x <= max(x0, x1) and min(y0, y1) <= y <= max(y0, y1)


def _check_name(what: str, name: str) -> None:
    """A zone's or line's name goes into its alerts (``zone``): the contract's limit applies here."""
    if not name or len(name) > ZONE_MAX:
        raise ValueError(f"a {what}'s name is 1 to {ZONE_MAX} characters, got {len(name)}")
