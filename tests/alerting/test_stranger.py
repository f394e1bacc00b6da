"""The stranger rule on synthetic faces: who alerts, when, how often, and never twice for one face."""

import dataclasses

import pytest
from helpers.alert import enrolled, event, face, person

from facestream.alerting.rules import stranger
from facestream.alerting.rules.recognition import Recognition
from facestream.alerting.rules.stranger import StrangerSettings


@pytest.fixture
def gallery():
    return enrolled()


SETTINGS = StrangerSettings(sightings=3, window_s=5, update_every_s=2, end_after_s=5)


def run(events, gallery, settings=SETTINGS, state=None):
    state = {} if state is None else state
    return [a for e in events for a in stranger.step(state, e, Recognition(gallery, [e]), settings)], state


def test_a_stranger_seen_three_times_opens_one_alert_that_updates_then_ends(gallery) -> None:
    seen = [event(i, i * 0.5, face(person(2))) for i in range(12)]  # 6 s of sightings
    gone = [event(12 + i, 6 + i, face()) for i in range(7)]  # faces without embeddings: time passes
    alerts, _ = run(seen + gone, gallery)
    assert [a.state for a in alerts] == ["new", "update", "update", "end"]
    assert len({a.alert_id for a in alerts}) == 1 and alerts[0].updated_ts_ns == int(1.0e9)  # third sighting
    end = alerts[-1]  # reported with the frame at 11 s; ended 5 s after the last sighting (5.5 s)
    assert end.count == 12 and (end.updated_ts_ns, end.ended_ts_ns) == (int(11e9), int(10.5e9))
    assert len(end.evidence) == 5
    assert all(s.similarity is not None and s.similarity < 0.5 for s in end.evidence)
    assert all(s.score is not None and s.score >= SETTINGS.min_score for s in end.evidence)


def test_known_people_never_alert(gallery) -> None:
    alerts, _ = run([event(i, i * 0.5, face(person(1))) for i in range(20)], gallery)
    assert alerts == []


def test_two_strangers_are_two_alerts(gallery) -> None:
    alerts, _ = run([event(i, i * 0.5, face(person(2)), face(person(3))) for i in range(3)], gallery)
    assert [a.state for a in alerts] == ["new", "new"] and len({a.alert_id for a in alerts}) == 2


def test_too_few_sightings_in_the_window_do_not_alert(gallery) -> None:
    alerts, _ = run([event(i, i * 3.0, face(person(2))) for i in range(6)], gallery)  # one every 3 s
    assert alerts == []


def test_small_or_unsure_faces_do_not_count(gallery) -> None:
    small = [event(i, i * 0.5, face(person(2), side=20)) for i in range(5)]
    unsure = [event(5 + i, 3 + i * 0.5, face(person(2), score=0.5)) for i in range(5)]
    assert run(small + unsure, gallery)[0] == []


def test_the_same_face_back_after_the_end_is_a_new_alert(gallery) -> None:
    first = [event(i, i * 0.5, face(person(2))) for i in range(3)] + [event(3, 10, face())]
    again = [event(4 + i, 11 + i * 0.5, face(person(2))) for i in range(3)]
    alerts, _ = run(first + again, gallery)
    assert [a.state for a in alerts] == ["new", "end", "new"] and alerts[0].alert_id != alerts[2].alert_id


def test_a_match_threshold_from_settings(gallery) -> None:
    close = person(1) * 0.6 + person(2) * 0.8  # cosine 0.6 to the enrolled face
    events = [event(i, i * 0.5, face(close / (close @ close) ** 0.5)) for i in range(3)]
    assert run(events, gallery)[0] == []  # 0.6 >= 0.5: the enrolled person
    assert run(events, gallery, dataclasses.replace(SETTINGS, match_threshold=0.7))[0] != []


def test_a_stranger_back_after_a_long_gap_ends_the_old_alert_first(gallery) -> None:
    # No events in between (the camera was off): the next frame, showing the face again, ends the alert.
    visits = [event(i, i * 0.5, face(person(2))) for i in range(3)] + [event(3, 60.0, face(person(2)))]
    alerts, _ = run(visits, gallery)
    assert [a.state for a in alerts] == ["new", "end"] and alerts[1].count == 3


def test_one_of_two_strangers_leaving_ends_only_theirs(gallery) -> None:
    both = [event(i, i * 0.5, face(person(2)), face(person(3))) for i in range(3)]
    one = [event(3 + i, 1.5 + i * 0.5, face(person(2))) for i in range(14)]  # person(3) gone 7 s
    alerts, state = run(both + one, gallery)
    ended = [a for a in alerts if a.state == "end"]
    assert len(ended) == 1 and ended[0].alert_id == alerts[1].alert_id and len(state["strangers"]) == 1
