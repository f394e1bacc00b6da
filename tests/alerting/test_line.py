"""The line rule: a tracked person crossing a named line, in a direction that counts, is one alert."""

import pytest
from helpers.alert import body, poses

from facestream.alerting.config import AlertingConfig
from facestream.alerting.rules.camera import on_pose
from facestream.zones import crossing, parse_lines

MIDDLE = {"middle": [[0.5, 0], [0.5, 1]]}  # drawn top to bottom: forward is left to right


def settings(lines: dict = MIDDLE, **line):
    return AlertingConfig(rules="line", line=line, cameras={"hall": {"lines": lines}}).for_camera("hall")


def walk(xs: list[float], rules, hip_y: float = 250.0) -> list:
    """A person walking through the 768x576 frame with their hips at each x in turn, 10 frames a second."""
    state: dict = {}
    return [a for i, x in enumerate(xs) for a in on_pose(state, poses(i, i / 10, body(x, hip_y, 0.0)), rules) or []]


def test_crossing_a_line_is_one_alert_naming_it_and_the_direction() -> None:
    alerts = walk([200 + 40 * i for i in range(10)], settings())  # left to right, across x = 384
    assert [(a.kind, a.state, a.zone, a.reason) for a in alerts] == [
        ("line", "new", "middle", "crossed middle forward"),
        ("line", "end", "middle", "crossed middle forward"),
    ]
    assert alerts[0].alert_id == alerts[1].alert_id and alerts[1].ended_ts_ns == alerts[0].started_ts_ns
    assert alerts[0].evidence[0].box is not None


@pytest.mark.parametrize(("direction", "counted"), [("both", 2), ("forward", 1), ("backward", 1)])
def test_only_the_directions_asked_for_count(direction: str, counted: int) -> None:
    there_and_back = [200 + 40 * i for i in range(10)] + [560 - 40 * i for i in range(10)]
    new = [a for a in walk(there_and_back, settings(direction=direction)) if a.state == "new"]
    assert len(new) == counted
    assert {a.reason.split()[-1] for a in new} <= {"forward", "backward"}


def test_walking_beside_a_short_line_or_standing_on_it_crosses_nothing() -> None:
    short = {"door": [[0.5, 0], [0.5, 0.2]]}  # the top fifth only: the person walks below it
    assert walk([200 + 40 * i for i in range(10)], settings(short)) == []
    assert walk([384.0] * 20, settings()) == []


def test_a_step_across_counts_and_a_step_that_starts_or_ends_on_the_line_does_not() -> None:
    assert crossing(((0.5, 0), (0.5, 1)), (0.4, 0.5), (0.6, 0.5)) == 1
    assert crossing(((0.5, 0), (0.5, 1)), (0.4, 0.5), (0.5, 0.5)) == 0
    assert crossing(((0.5, 0), (0.5, 1)), (0.5, 0.5), (0.6, 0.5)) == 0


@pytest.mark.parametrize(
    ("lines", "says"),
    [
        ({"a": [[0, 0]]}, "two points"),
        ({"a": [[0, 0], [0, 0]]}, "two different points"),
        ({"a": [[0, 0], [2, 1]]}, "0..1"),
    ],
)
def test_a_bad_line_says_what_is_wrong(lines: dict, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        parse_lines(lines)
