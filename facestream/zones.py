"""Zones: named polygons of a camera's picture, in coordinates normalised to the frame (0 to 1, left
to right and top to bottom), so one zone fits every resolution a camera sends. The alerting rules
limit themselves to them; the dashboard draws them on the camera's tile."""

import json

Polygon = tuple[tuple[float, float], ...]
Zones = dict[str, Polygon]  # name -> corners, in the order configured


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


def parse_camera_zones(text: str) -> dict:
    """``{"gate": {"door": [[0, 0.5], ...]}}`` (JSON, or TOML tables) -> the same dict, every camera's zones checked."""
    try:
        cameras = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(
            f'expected camera -> zones as a JSON object, e.g. {{"gate": {{"door": ...}}}}: {exc}'
        ) from None
    if not isinstance(cameras, dict):
        raise ValueError(f"expected camera -> zones as a JSON object, got {text!r}")
    for camera, zones in cameras.items():
        try:
            parse_zones(zones)
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
