"""The crowd rule on synthetic events: it opens when most frames of the window are crowded, ends when
that stops, and counts the most faces seen at once."""

from helpers.alert import event, face

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
    end = alerts[-1]  # most of the 4 s window was crowded until 6.5 s: ended 3 s later
    assert end.count == 4 and (end.updated_ts_ns, end.ended_ts_ns) == (int(9.5e9), int(9.5e9))
    assert len(end.evidence) == 5 and all(s.box is None and s.score is None for s in end.evidence)


def test_the_count_is_the_most_faces_in_one_of_the_alert_s_frames() -> None:
    # Seen in the stream: a crowd opened with count 2 whose only evidence frame had one face.
    settings = CrowdSettings(min_faces=2, window_s=4, min_frames=3, share=0.5)
    frames = [event(0, 0.0, *[face()] * 4), event(1, 0.5, face()), event(2, 1.0, *[face()] * 2)]
    frames += [event(3, 1.5, *[face()] * 2)]
    opened = run(frames, settings)[0]
    assert opened.state == "new" and opened.count == 4
    assert [s.frame_seq for s in opened.evidence][0] == 0  # the frame with the 4 faces, from before the opening


def test_a_crowd_in_a_few_frames_is_no_crowd() -> None:
    flicker = [event(i, i * 0.5, *[face()] * (3 if i % 3 == 0 else 1)) for i in range(20)]
    assert run(flicker) == []


def test_unsure_faces_do_not_count() -> None:
    assert run([event(i, i * 0.5, *[face(score=0.3)] * 5) for i in range(10)]) == []
