"""The loitering rule: someone staying in a zone longer than dwell-s is one alert, naming the zone."""

from dataclasses import replace

import pytest
from helpers.alert import body, enrolled, event, face, poses

from facestream.alerting.config import AlertingConfig
from facestream.alerting.rules.camera import on_event, on_pose
from facestream.schemas import Face

LEFT = [[0, 0], [0.5, 0], [0.5, 1], [0, 1]]
RIGHT = [[0.5, 0], [1, 0], [1, 1], [0.5, 1]]


def at(x: float, y: float = 240.0, side: float = 80.0, score: float = 0.9) -> Face:
    """A face of ``side`` pixels centred at (x, y) of the helpers' 640x480 frame (no embedding: loitering
    does not need to know who it is)."""
    return replace(face(side=side, score=score), box=(x - side / 2, y - side / 2, x + side / 2, y + side / 2))


def settings(zones: dict | None = None, **loitering):
    camera = {} if zones is None else {"zones": zones, "rule_zones": {"loitering": list(zones)}}
    config = AlertingConfig(
        rules="loitering", loitering={"dwell_s": 10, "update_every_s": 5, **loitering}, cameras={"gate": camera}
    )
    return config.for_camera("gate")


def run(frames: list[tuple[float, list[Face]]], rules) -> list:
    """Every alert of ``frames`` (capture time, faces) in order, on one camera."""
    state: dict = {}
    gallery = enrolled()
    return [a for i, (t, faces) in enumerate(frames) for a in on_event(state, event(i, t, *faces), gallery, rules)]


def test_someone_staying_longer_than_the_dwell_time_is_one_alert_until_they_leave() -> None:
    # Two frames a second for 16 s, drifting slowly right inside the left half, then gone.
    stay = [(i / 2, [at(100 + i)]) for i in range(32)] + [(t, []) for t in (16.0, 17.0, 18.0, 19.0, 20.0)]
    alerts = run(stay, settings({"door": LEFT}))
    assert [(a.kind, a.state, a.zone, a.count) for a in alerts] == [
        ("loitering", "new", "door", 10),
        ("loitering", "update", "door", 15),
        ("loitering", "end", "door", 15),
    ]
    assert len({a.alert_id for a in alerts}) == 1
    assert alerts[-1].ended_ts_ns == int(15.5e9)  # its last frame in the zone
    assert alerts[0].evidence[0].capture_ts_ns == 0  # the stay's first frame is always kept


def test_a_short_visit_and_someone_outside_the_zones_raise_nothing() -> None:
    short = [(i / 2, [at(100)]) for i in range(18)]  # 8.5 s
    outside = [(i / 2, [at(500)]) for i in range(40)]
    assert run(short, settings({"door": LEFT})) == []
    assert run(outside, settings({"door": LEFT})) == []
    assert [a.state for a in run(outside, settings())] == ["new", "update"]  # no zones: in view (10 s, 15 s)


def test_moving_into_another_zone_ends_one_stay_and_starts_another() -> None:
    # 12 s on the left, then 12 s on the right (one step across the line, the same track).
    walk = [(i / 2, [at(250)]) for i in range(24)] + [(12 + i / 2, [at(390)]) for i in range(24)]
    alerts = run(walk, settings({"left": LEFT, "right": RIGHT}, update_every_s=100))
    assert [(a.state, a.zone) for a in alerts] == [("new", "left"), ("end", "left"), ("new", "right")]
    assert alerts[0].alert_id == alerts[1].alert_id != alerts[2].alert_id


def test_two_people_are_two_stays_and_faint_faces_are_not_followed() -> None:
    two = [(i / 2, [at(100, 100), at(100, 380), at(300, 240, score=0.3)]) for i in range(22)]
    alerts = run(two, settings({"door": LEFT}))
    assert [(a.state, a.zone) for a in alerts] == [("new", "door"), ("new", "door")]
    assert {a.evidence[0].box[1] for a in alerts} == {60.0, 340.0}


def test_a_schedule_ending_closes_an_open_stay() -> None:
    rules = replace(settings(), rules=("stranger",))  # the camera stopped running loitering
    state: dict = {}
    opened = [a for i in range(24) for a in on_event(state, event(i, i / 2, at(100)), enrolled(), settings())]
    closed = on_event(state, event(24, 12.0, at(100)), enrolled(), rules)
    assert [a.state for a in opened] == ["new"]
    assert [(a.state, a.reason) for a in closed] == [("end", "the camera no longer runs the loitering rule")]


@pytest.mark.parametrize(("follows", "alerts"), [("people", 1), ("faces", 0)])
def test_it_can_follow_people_in_pose_events(follows: str, alerts: int) -> None:
    rules = settings({"floor": [[0, 0.5], [1, 0.5], [1, 1], [0, 1]]}, follows=follows)
    state: dict = {}
    found = [
        a for i in range(30) for a in on_pose(state, poses(i, i / 2, body(300, 300, 0.0), camera="gate"), rules) or []
    ]
    assert [(a.kind, a.state, a.zone) for a in found] == [("loitering", "new", "floor")][:alerts]
