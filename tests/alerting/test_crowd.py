"""The crowd rule on synthetic events: it opens when most frames of the window are crowded, ends when
that stops, and counts the most faces seen at once."""

from alert_helpers import event, face

from facestream.alerting.rules import crowd
from facestream.alerting.rules.crowd import CrowdSettings

SETTINGS = CrowdSettings(min_faces=3, window_s=4, min_frames=3, update_every_s=2, end_after_s=3)


def run(events, settings=SETTINGS):
    state: dict = {}
    return [a for e in events for a in crowd.step(state, e, settings)]


def test_a_held_crowd_opens_one_alert_that_ends_when_it_disperses() -> None:
    crowded = [event(i, i * 0.5, *[face()] * (3 + i % 2)) for i in range(10)]  # 5 s of 3-4 faces
    quiet = [event(10 + i, 5 + i * 0.5, face()) for i in range(10)]
    alerts = run(crowded + quiet)
    assert [a.state for a in alerts] == ["new", "update", "update", "end"]
    assert len({a.alert_id for a in alerts}) == 1 and alerts[0].updated_ts_ns == int(1.0e9)  # third frame
    assert alerts[-1].count == 4 and alerts[-1].ended_ts_ns is not None and len(alerts[-1].evidence) == 5


def test_a_crowd_in_a_few_frames_is_no_crowd() -> None:
    flicker = [event(i, i * 0.5, *[face()] * (3 if i % 3 == 0 else 1)) for i in range(20)]
    assert run(flicker) == []


def test_unsure_faces_do_not_count() -> None:
    assert run([event(i, i * 0.5, *[face(score=0.3)] * 5) for i in range(10)]) == []
