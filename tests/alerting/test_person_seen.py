"""The person_seen rule, event by event: a watched person seen is one alert per visit, naming them;
an enrolled person not watched, a stranger and a faint face raise nothing."""

from helpers.alert import enrolled, event, face, person

from facestream.alerting.rules import person_seen
from facestream.alerting.rules.person_seen import PersonSeenSettings
from facestream.alerting.rules.recognition import Recognition

SETTINGS = PersonSeenSettings(sightings=2, window_s=5, update_every_s=10, end_after_s=10)


def run(events, gallery=None, state=None) -> list:
    gallery = gallery or enrolled(watched=True)
    state = {} if state is None else state
    return [
        a for e in events for a in person_seen.step(state, e, Recognition(gallery, [e]), gallery.watched_name, SETTINGS)
    ]


def test_a_watched_person_is_one_alert_per_visit_that_names_them() -> None:
    alice = person(1)
    visit = [event(i, i * 0.5, face(alice)) for i in range(40)]  # 20 s in view
    gone = [event(40 + i, 20 + i, face()) for i in range(12)]  # then only faceless frames
    state: dict = {}
    alerts = run(visit + gone, state=state)
    assert [a.state for a in alerts] == ["new", "update", "end"]
    new, _, end = alerts
    assert new.kind == "person_seen" and new.started_ts_ns == 0 and new.updated_ts_ns == int(0.5e9)
    assert all(s.person == "Alice" and s.similarity and s.similarity > 0.99 for s in new.evidence)
    assert end.ended_ts_ns == int((19.5 + 10) * 1e9) and end.count == 40
    again = run([event(60 + i, 35 + i * 0.5, face(alice)) for i in range(4)], state=state)
    assert [a.state for a in again] == ["new"] and again[0].alert_id != new.alert_id  # back: a new visit


def test_nobody_else_raises_it() -> None:
    frames = [event(i, i * 0.5, face(person(3)), face(person(9)), face(person(1), score=0.5)) for i in range(20)]
    assert run(frames) == []  # Bob is enrolled, not watched; person(9) a stranger; Alice too faint
    assert run([event(i, i * 0.5, face(person(1))) for i in range(20)], gallery=enrolled()) == []  # not watched


def test_one_person_twice_in_a_frame_is_one_sighting() -> None:
    alerts = run([event(0, 0.0, face(person(1)), face(person(1)))])
    assert alerts == []  # one sighting of two needed
