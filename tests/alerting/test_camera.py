"""A camera's rules together: duplicates and replays change nothing, per-camera settings apply."""

import dataclasses

import orjson
import pytest
from helpers.alert import SFACE, enrolled, event, face, person

from facestream.alerting.config import AlertingConfig
from facestream.alerting.rules.camera import on_event
from facestream.alerting.rules.crowd import CrowdSettings
from facestream.alerting.rules.fall import FallSettings
from facestream.alerting.rules.state import written
from facestream.alerting.rules.stranger import StrangerSettings
from facestream.errors import ConfigError
from facestream.schemas import GalleryEntry, pack_alert, pack_gallery_entry


def test_replaying_events_gives_no_new_alerts_and_the_same_ids() -> None:
    gallery, config = enrolled(), AlertingConfig()
    events = [event(i, i * 0.5, face(person(2)), *[face()] * 5) for i in range(12)]
    state: dict = {}
    first = [a for e in events for a in on_event(state, e, gallery, config.for_camera("gate"))]
    assert {a.kind for a in first} == {"stranger", "crowd"}
    snapshot = orjson.dumps(state, default=written)  # as the table writes it
    again = [on_event(state, e, gallery, config.for_camera("gate")) for e in events]
    assert again == [None] * len(events) and orjson.dumps(state, default=written) == snapshot
    restored = orjson.loads(snapshot)  # as a worker taking the camera over reads it back
    assert [on_event(restored, e, gallery, config.for_camera("gate")) for e in events] == [None] * len(events)
    fresh: dict = {}  # a worker rebuilding from nothing makes the same alerts under the same ids
    redo = [a for e in events for a in on_event(fresh, e, gallery, config.for_camera("gate"))]
    assert redo == first


def test_a_state_read_back_from_the_changelog_goes_on_as_the_one_in_memory() -> None:
    gallery, settings = enrolled(), AlertingConfig().for_camera("gate")
    events = [event(i, i * 0.5, face(person(2)), face(person(5)), face(person(1))) for i in range(30)]
    kept: dict = {}
    before = [a for e in events[:10] for a in on_event(kept, e, gallery, settings)]
    assert [a.state for a in before if a.kind == "stranger"] == ["new", "new", "update", "update"]
    restored = orjson.loads(orjson.dumps(kept, default=written))  # strangers' faces as packed text
    assert [on_event(restored, e, gallery, settings) for e in events[20:]] == [
        on_event(kept, e, gallery, settings) for e in events[20:]
    ]


def test_each_sighting_names_its_face_track_one_per_person_kept_across_a_takeover() -> None:
    gallery, settings = enrolled(), AlertingConfig().for_camera("gate")
    events = [event(i, i * 0.5, face(person(2)), face(person(5))) for i in range(12)]
    state: dict = {}
    first = [a for e in events[:6] for a in on_event(state, e, gallery, settings)]
    restored = orjson.loads(orjson.dumps(state, default=written))  # a worker taking the camera over
    later = [a for e in events[6:] for a in on_event(restored, e, gallery, settings)]
    tracks = {a.alert_id: {s.track for s in a.evidence} for a in first + later if a.kind == "stranger"}
    assert len(tracks) == 2 and all(len(names) == 1 for names in tracks.values())  # one track per stranger
    assert {n for names in tracks.values() for n in names} == {f"{events[0].event_id}#0", f"{events[0].event_id}#1"}
    crowd_only = AlertingConfig(rules="crowd").for_camera("gate")  # no rule names tracks: none are kept
    on_event(state, event(12, 6.0, face(person(2))), gallery, crowd_only)
    assert "face_tracks" not in state


def test_a_stranger_who_comes_back_is_a_second_alert_never_nothing() -> None:
    gallery, settings = enrolled(), AlertingConfig(rules="stranger").for_camera("gate")
    visit = [event(i, i * 0.5, face(person(2))) for i in range(6)]  # 3 s in view
    away = [event(6 + i, 3 + i, face()) for i in range(10)]  # 10 s out of view: the visit ends
    back = [event(16 + i, 13 + i * 0.5, face(person(2))) for i in range(6)]
    state: dict = {}
    alerts = [a for e in visit + away + back for a in on_event(state, e, gallery, settings)]
    assert [a.state for a in alerts] == ["new", "end", "new"]
    assert len({a.alert_id for a in alerts}) == 2  # two visits, two alerts


def test_a_track_is_who_most_of_its_good_faces_are_so_one_odd_frame_names_nobody() -> None:
    gallery = enrolled(watched=True)
    alice = person(1)
    blurred = alice * 0.45 + person(7) * 0.89  # Alice's face as a poor frame gives it: cosine 0.45 to her
    blurred /= (blurred @ blurred) ** 0.5
    frames = [face(alice)] * 4 + [face(blurred)] * 3 + [face(alice)] * 3
    events = [event(i, i * 0.5, f) for i, f in enumerate(frames)]

    def kinds(config: AlertingConfig) -> list[str]:
        state: dict = {}
        settings = config.for_camera("gate")
        return [f"{a.kind} {a.state}" for e in events for a in on_event(state, e, gallery, settings)]

    # Followed: the three frames under the threshold vote for nobody known, but Alice leads: no stranger.
    assert kinds(AlertingConfig(rules="stranger,person_seen")) == ["person_seen new"]
    # Face by face (faces not followed), the same three frames are a stranger.
    unfollowed = AlertingConfig(rules="stranger,person_seen", face_tracks={"follow": False})
    assert kinds(unfollowed) == ["person_seen new", "stranger new"]


def test_a_stranger_enrolled_while_in_view_is_named_by_the_next_good_face() -> None:
    gallery, settings = enrolled(), AlertingConfig(rules="stranger").for_camera("gate")
    state: dict = {}
    before = [a for i in range(12) for a in on_event(state, event(i, i * 0.5, face(person(2))), gallery, settings)]
    assert [a.state for a in before] == ["new", "update", "update"]  # six seconds a stranger: many votes
    entry = GalleryEntry("joe", "Joe", SFACE, (person(2).astype("<f2").tobytes(),), 0, ("joe.jpg",))
    gallery.apply(b"joe", pack_gallery_entry(entry))
    after = [a for i in range(12, 40) for a in on_event(state, event(i, i * 0.5, face(person(2))), gallery, settings)]
    # His past votes were cast against a gallery without him: the next frame names him, and the alert
    # ends 5 s after his last frame as a stranger (5.5 s), with no update after the enrolment.
    assert [(a.state, a.ended_ts_ns) for a in after] == [("end", int(10.5e9))]


def test_per_camera_rules_and_settings() -> None:
    config = AlertingConfig(
        crowd={"min_faces": 2},
        fall={"hold_s": 3},
        cameras={"gate": {"rules": "stranger", "stranger": {"sightings": 1}}, "hall": {"fall": {"hold_s": 5}}},
    )
    gate, lobby = config.for_camera("gate"), config.for_camera("lobby")
    assert gate.rules == ("stranger",) and gate.of(StrangerSettings).sightings == 1
    assert gate.of(CrowdSettings).min_faces == 2
    assert lobby.rules == ("stranger", "crowd", "fall", "camera_offline", "person_seen")
    assert lobby.of(StrangerSettings).sightings == 3
    assert (lobby.of(FallSettings).hold_s, config.for_camera("hall").of(FallSettings).hold_s) == (3, 5)
    alerts = on_event({}, event(0, 0.0, face(person(2)), face(), face()), enrolled(), gate)
    assert [a.kind for a in alerts] == ["stranger"]


def test_a_misspelt_setting_is_an_error_naming_the_camera_and_the_key() -> None:
    with pytest.raises(ConfigError, match=r"--cameras: camera 'gate': --stranger: unknown setting\(s\) sightngs"):
        AlertingConfig(cameras={"gate": {"stranger": {"sightngs": 1}}})
    with pytest.raises(ConfigError, match="--crowd: --min-faces must be >= 1"):
        AlertingConfig(crowd={"min_faces": 0})
    with pytest.raises(ConfigError, match="--rules: rules are a comma-separated list of stranger, crowd"):
        AlertingConfig(rules="stranger,fire")


def test_a_rule_the_camera_no_longer_runs_ends_its_open_alerts_at_the_next_event() -> None:
    # Seen in the stream: stranger alerts open for good once their camera's rules dropped the stranger rule.
    gallery = enrolled()
    events = [event(i, i * 0.5, face(person(2)), *[face()] * 5) for i in range(8)]
    state: dict = {}
    before = AlertingConfig().for_camera("gate")
    opened = [a for e in events for a in on_event(state, e, gallery, before)]
    assert {(a.kind, a.state) for a in opened} >= {("stranger", "new"), ("crowd", "new")}
    after = AlertingConfig(rules="fall").for_camera("gate")
    ended = on_event(state, event(8, 4.0, face(person(2))), gallery, after)
    assert sorted((a.kind, a.state, a.ended_ts_ns) for a in ended) == [
        ("crowd", "end", int(4e9)),
        ("stranger", "end", int(4e9)),
    ]
    assert {a.reason for a in ended} == {
        "the camera no longer runs the crowd rule",
        "the camera no longer runs the stranger rule",
    }
    assert on_event(state, event(9, 4.5, face(person(2))), gallery, after) == []


def test_the_help_and_the_defaults_come_from_the_registry() -> None:
    from click.testing import CliRunner

    from facestream.alerting.config import DEFAULT_RULES, RULES
    from facestream.alerting.rules.registry import REGISTRY
    from facestream.tools.cli import cli

    shown = CliRunner().invoke(cli, ["alerting", "--help"], terminal_width=200).output
    assert RULES == tuple(rule.name for rule in REGISTRY) and "person_seen" in DEFAULT_RULES
    assert [line.split()[0] for line in shown.splitlines() if line.startswith("    ") and line.split()[0] in RULES] == [
        *RULES
    ]


def test_a_crowd_alert_s_evidence_names_no_track() -> None:
    # The crowd rule keeps a frame's face count where the stranger rule keeps a face's track.
    gallery, settings = enrolled(), AlertingConfig(rules="crowd,stranger").for_camera("gate")
    state: dict = {}
    alerts = [a for i in range(12) for a in on_event(state, event(i, i * 0.5, *[face()] * 6), gallery, settings)]
    crowd = [a for a in alerts if a.kind == "crowd"]
    assert crowd and all(s.track is None for a in crowd for s in a.evidence)
    assert [pack_alert(a) for a in crowd]  # what the worker does with them: they pack


def _tracked(events, every: int) -> list:
    """``events`` as a detector following its faces sends them: each face named by a track (its index),
    its embedding only in the first frame and every ``every``-th after."""
    return [
        dataclasses.replace(
            e,
            faces=tuple(
                dataclasses.replace(f, track=i, embedding=f.embedding if n % every == 0 else None)
                for i, f in enumerate(e.faces)
            ),
        )
        for n, e in enumerate(events)
    ]


@pytest.mark.parametrize("rules", ["stranger", "person_seen"])
def test_faces_lent_their_tracks_embedding_make_the_alerts_every_embedded_face_makes(rules: str) -> None:
    gallery = enrolled(watched=True)
    settings = AlertingConfig(rules=rules).for_camera("gate")
    visit = [event(i, i * 0.2, face(person(2), track=None), face(person(1))) for i in range(40)]
    every: dict = {}
    expected = [a for e in visit for a in on_event(every, e, gallery, settings)]
    assert {a.kind for a in expected} == {rules} and len({a.alert_id for a in expected}) == 1
    lent: dict = {}
    found = [a for e in _tracked(visit, every=10) for a in on_event(lent, e, gallery, settings)]
    assert [(a.alert_id, a.state, a.count) for a in found] == [(a.alert_id, a.state, a.count) for a in expected]
    assert {s.track for a in found for s in a.evidence} == {s.track for a in expected for s in a.evidence}


def test_a_face_whose_track_was_never_seen_embedded_counts_for_nothing() -> None:
    """A reader that starts mid-track (or lost the event with the embedding) has nothing to lend: the
    faces count as faces without embeddings until the track's next embedding."""
    gallery, settings = enrolled(), AlertingConfig(rules="stranger").for_camera("gate")
    visit = _tracked([event(i, i * 0.2, face(person(2))) for i in range(40)], every=10)
    state: dict = {}
    alerts = [a for e in visit[3:] for a in on_event(state, e, gallery, settings)]
    first_embedded = 10  # frames 3-9 carry none and have none to take
    assert alerts and alerts[0].started_ts_ns == visit[first_embedded].capture_ts_ns
