"""Zones: a rule limited to named areas of a camera's picture sees only what stands in them."""

from dataclasses import replace

import pytest
from helpers.alert import body, enrolled, event, face, person, poses

from facestream.alerting.config import AlertingConfig
from facestream.alerting.rules.camera import on_event, on_pose
from facestream.alerting.rules.zones import face_point, faces_in, zone_of
from facestream.errors import ConfigError
from facestream.schemas import Face
from facestream.zones import inside, parse_zones

# The left half of the picture, and a triangle in its lower right.
LEFT = [[0, 0], [0.5, 0], [0.5, 1], [0, 1]]
CORNER = [[1, 0.5], [1, 1], [0.5, 1]]


def at(x: float, y: float, side: float = 100.0) -> Face:
    """A stranger's face of ``side`` pixels centred at (x, y) of the helpers' 640x480 frame."""
    return replace(face(person(2), side=side), box=(x - side / 2, y - side / 2, x + side / 2, y + side / 2))


def test_inside_counts_the_edge_and_follows_concave_outlines() -> None:
    (square,) = parse_zones({"square": LEFT}).values()
    assert inside(square, 0.25, 0.5) and inside(square, 0.5, 0.5) and not inside(square, 0.51, 0.5)
    notch = parse_zones({"u": [[0, 0], [0.3, 0], [0.3, 0.6], [0.6, 0.6], [0.6, 0], [1, 0], [1, 1], [0, 1]]})["u"]
    assert not inside(notch, 0.45, 0.3) and inside(notch, 0.45, 0.8) and inside(notch, 0.8, 0.3)


@pytest.mark.parametrize(
    ("zones", "says"),
    [
        ({"door": [[0, 0], [1, 1]]}, "three or more corners"),
        ({"door": [[0, 0], [1, 1], [2, 0]]}, "both in 0..1"),
        ({"door": [[0, 0], [1, 1], [0, "1"]]}, "both in 0..1"),
        ([[0, 0], [1, 1], [1, 0]], "a table of name -> corners"),
    ],
)
def test_a_bad_zone_says_what_is_wrong(zones, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        parse_zones(zones)


def test_a_rule_may_only_name_zones_its_camera_has() -> None:
    with pytest.raises(ConfigError, match="names zones this camera does not have: dor"):
        AlertingConfig(cameras={"gate": {"zones": {"door": LEFT}, "rule_zones": {"stranger": ["dor"]}}})
    with pytest.raises(ConfigError, match="rules limited to zones are stranger, crowd, fall, person_seen"):
        AlertingConfig(cameras={"gate": {"zones": {"door": LEFT}, "rule_zones": {"camera_offline": ["door"]}}})


def test_a_face_counts_where_the_centre_of_its_box_is() -> None:
    seen = event(0, 0.0, at(200, 240), at(330, 240), at(600, 460))  # left, just right of the middle, corner
    zones = parse_zones({"left": LEFT, "corner": CORNER})
    assert [f.box[0] for f in faces_in(seen, zones).faces] == [150, 550]
    assert faces_in(seen, {"left": zones["left"]}).faces == seen.faces[:1]
    named = zone_of(zones, seen, face_point)
    assert [named(f.box) for f in seen.faces] == ["left", None, "corner"]


def test_a_stranger_outside_the_zone_raises_nothing_and_inside_one_alert() -> None:
    config = AlertingConfig(cameras={"gate": {"zones": {"door": LEFT}, "rule_zones": {"stranger": ["door"]}}})
    gallery, zoned, whole = enrolled(), config.for_camera("gate"), AlertingConfig().for_camera("gate")

    def alerts(x: float, settings) -> list:
        state: dict = {}
        return [a for i in range(6) for a in on_event(state, event(i, i * 0.5, at(x, 240)), gallery, settings)]

    assert alerts(500, zoned) == []
    assert [(a.kind, a.state, a.zone) for a in alerts(100, zoned)] == [("stranger", "new", "door")]
    # No zones: the whole frame, and no zone named.
    assert [(a.kind, a.state, a.zone) for a in alerts(500, whole)] == [("stranger", "new", None)]


def test_a_crowd_counts_only_the_faces_in_its_zones() -> None:
    config = AlertingConfig(
        crowd={"min_faces": 3},
        rules="crowd",
        cameras={"gate": {"zones": {"left": LEFT}, "rule_zones": {"crowd": ["left"]}}},
    )
    settings, gallery = config.for_camera("gate"), enrolled()
    two_in = [at(100, 100, 60), at(100, 300, 60), at(400, 100, 60), at(400, 300, 60)]
    state: dict = {}
    assert [a for i in range(8) for a in on_event(state, event(i, i * 0.25, *two_in), gallery, settings)] == []
    three_in = [*two_in, at(200, 200, 60)]
    state: dict = {}
    crowds = [a for i in range(8) for a in on_event(state, event(i, i * 0.25, *three_in), gallery, settings)]
    assert [(a.kind, a.state, a.count, a.zone) for a in crowds][:1] == [("crowd", "new", 3, "left")]


def test_each_zone_counts_its_own_crowd() -> None:
    # Three faces in the left half and two in the right: with min_faces 3 only the left holds a crowd;
    # with 2, both do, as two alerts (one per zone, each named, with ids of their own), from one frame.
    right = [[0.5, 0], [1, 0], [1, 1], [0.5, 1]]
    faces = [at(100, 100, 60), at(100, 300, 60), at(200, 200, 60), at(400, 100, 60), at(400, 300, 60)]

    def crowds(min_faces: int) -> list:
        config = AlertingConfig(
            crowd={"min_faces": min_faces},
            rules="crowd",
            cameras={"gate": {"zones": {"left": LEFT, "right": right}, "rule_zones": {"crowd": ["left", "right"]}}},
        )
        state: dict = {}
        settings, gallery = config.for_camera("gate"), enrolled()
        return [a for i in range(8) for a in on_event(state, event(i, i * 0.25, *faces), gallery, settings)]

    assert [(a.state, a.zone, a.count) for a in crowds(3)] == [("new", "left", 3)]
    both = crowds(2)
    assert sorted((a.state, a.zone, a.count) for a in both) == [("new", "left", 3), ("new", "right", 2)]
    assert len({a.alert_id for a in both}) == 2


def test_a_crowd_zone_taken_off_the_rule_ends_its_alert() -> None:
    faces = [at(100, 100, 60), at(100, 300, 60), at(200, 200, 60)]
    zoned = AlertingConfig(
        crowd={"min_faces": 3},
        rules="crowd",
        cameras={"gate": {"zones": {"left": LEFT}, "rule_zones": {"crowd": ["left"]}}},
    ).for_camera("gate")
    whole = AlertingConfig(crowd={"min_faces": 3}, rules="crowd").for_camera("gate")
    state: dict = {}
    opened = [a for i in range(4) for a in on_event(state, event(i, i * 0.25, *faces), enrolled(), zoned)]
    moved = on_event(state, event(4, 1.0, *faces), enrolled(), whole)
    assert [(a.state, a.zone) for a in opened] == [("new", "left")]
    assert [(a.state, a.zone, a.reason) for a in moved] == [
        ("end", "left", "the crowd rule no longer counts in this zone")
    ]


def test_a_person_is_where_they_stand() -> None:
    # A fall rule limited to the lower right corner of a 768x576 frame: a fall whose feet are in it
    # alerts; the same fall higher up, its box reaching into the corner or not, raises nothing.
    config = AlertingConfig(
        rules="fall", cameras={"hall": {"zones": {"corner": CORNER}, "rule_zones": {"fall": ["corner"]}}}
    )
    settings = config.for_camera("hall")

    def falls(hip_x: float, hip_y: float) -> list:
        """Standing 2 s (hips at hip_x, hip_y), down within 0.5 s (hips 1.3 torsos lower), lying 5 s; 10 fps."""
        start, end = (hip_x, hip_y, 0.0), (hip_x + 30, hip_y + 130, 88.0)
        steps = (
            [start] * 20 + [tuple(a + (b - a) * (i + 1) / 5 for a, b in zip(start, end)) for i in range(5)] + [end] * 50
        )
        state: dict = {}
        return [
            a for i, pose in enumerate(steps) for a in on_pose(state, poses(i, i / 10, body(*pose)), settings) or []
        ]

    # Feet at y 560: in the corner.
    assert [(a.kind, a.state, a.zone) for a in falls(650, 380)][:1] == [("fall", "new", "corner")]
    assert falls(650, 100) == []  # feet at y 280: above it
