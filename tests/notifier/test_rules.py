"""A target's rules, record by record: what it asked for, cooldowns per camera and kind, the hourly cap
and quiet hours, all on the alerts' own times."""

import dataclasses

import pytest
from helpers.store import OPENED, S

from facestream.errors import ConfigError
from facestream.notifier.rules import TargetSettings, decide, track_open, wants
from facestream.schemas import Sighting


def alert(t: float, camera: str = "gate", kind: str = "stranger", state: str = "new", n: int = 0):
    return dataclasses.replace(
        OPENED, alert_id=f"a{n}", camera_id=camera, kind=kind, state=state, updated_ts_ns=int(1_800_000_000 * S + t * S)
    )


def run(alerts, settings: TargetSettings) -> tuple[list[str], dict]:
    state: dict = {}
    sent = [a.alert_id for a in alerts if wants(a, settings) and decide(state, a, settings) is None]
    return sent, state


def test_a_flood_of_new_alerts_is_one_message_per_camera_and_kind_a_minute() -> None:
    flood = [alert(i * 0.1, camera=f"cam-{i % 5}", n=i) for i in range(100)]  # 100 alerts in 10 s, 5 cameras
    sent, state = run(flood, TargetSettings(url="json://x"))
    assert sent == ["a0", "a1", "a2", "a3", "a4"] and state["held"] == {"cooldown": 95}
    later = alert(70, camera="cam-0", n=100)  # past the minute: sent again
    assert decide(state, later, TargetSettings(url="json://x")) is None


def test_the_hourly_cap_holds_back_the_rest_and_frees_up_an_hour_later() -> None:
    settings = TargetSettings(url="json://x", cooldown_s=0, max_per_hour=10)
    sent, state = run([alert(i, n=i) for i in range(30)], settings)
    assert len(sent) == 10 and state["held"] == {"cap": 20}
    assert decide(state, alert(3601, n=99), settings) is None


def test_only_what_the_target_asked_for() -> None:
    settings = TargetSettings(
        url="json://x", kinds="fall,camera_offline", cameras="door", states="new,end", cooldown_s=0
    )
    records = [
        alert(1, kind="stranger", camera="door", n=1),
        alert(2, kind="fall", camera="gate", n=2),
        alert(3, kind="fall", camera="door", n=3),
        alert(4, kind="fall", camera="door", state="update", n=4),
        alert(5, kind="fall", camera="door", state="end", n=5),
    ]
    assert run(records, settings)[0] == ["a3", "a5"]


def test_quiet_hours_in_the_target_s_time_zone() -> None:
    # 1,800,000,000 s after the epoch is 2027-01-15 08:00 UTC, 09:00 in Berlin.
    settings = TargetSettings(url="json://x", quiet_hours="08:30-10:00", timezone="Europe/Berlin", cooldown_s=0)
    sent, state = run([alert(0, n=1), alert(3600, n=2)], settings)  # 09:00 and 10:00 in Berlin
    assert sent == ["a2"] and state["held"] == {"quiet": 1}
    overnight = TargetSettings(url="json://x", quiet_hours="22:00-07:00", timezone="UTC", cooldown_s=0)
    assert run([alert(-3 * 3600, n=1), alert(0, n=2)], overnight)[0] == ["a2"]  # 05:00 quiet, 08:00 not


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({}, "needs its url"),
        ({"url": "json://x", "kinds": "fire"}, "fire"),
        ({"url": "json://x", "quiet_hours": "10-12"}, "HH:MM-HH:MM"),
        ({"url": "json://x", "timezone": "Mars/Olympus"}, "unknown time zone"),
    ],
)
def test_bad_settings_say_what_is_wrong(fields: dict, says: str) -> None:
    with pytest.raises(ConfigError, match=says):
        TargetSettings(**fields)


def test_a_target_s_minimum_score_asks_the_best_sighting_and_lets_crowds_through() -> None:
    settings = TargetSettings(url="json://x", min_score=0.9)
    faint = dataclasses.replace(OPENED, evidence=(Sighting("e1", 1, S, (1.0, 2.0, 50.0, 60.0), 0.1, 0.82),))
    clear = dataclasses.replace(
        faint, evidence=(*faint.evidence, Sighting("e2", 2, S, (1.0, 2.0, 50.0, 60.0), 0.1, 0.95))
    )
    crowd = dataclasses.replace(OPENED, kind="crowd", evidence=(Sighting("e3", 3, S),))
    assert [wants(a, settings) for a in (faint, clear, crowd)] == [False, True, True]


def test_a_state_target_takes_every_record_and_counts_what_is_open() -> None:
    settings = TargetSettings(url="mqtt://broker/facestream", mqtt_state=True, kinds="stranger")
    state: dict = {}
    records = [
        alert(0, n=1),
        alert(1, n=2),  # a second stranger on the same camera, at once
        alert(2, state="update", n=1),
        alert(3, state="end", n=1),
        alert(4, camera="door", n=3),
        alert(5, state="end", n=2),
    ]
    assert all(wants(a, settings) for a in records) and not wants(alert(6, kind="fall"), settings)
    assert [track_open(state, a) for a in records] == [1, 2, 2, 1, 1, 0]
    assert state["open"] == {"door/stranger": ["a3"]}
    with pytest.raises(ConfigError, match="mqtt://"):
        TargetSettings(url="json://x", mqtt_state=True)


def test_a_target_can_ask_for_chosen_people_or_mute_them() -> None:
    seen = Sighting("e1", 1, S, (1.0, 2.0, 50.0, 60.0), 0.9, 0.95, person="Joe Biden")
    biden = dataclasses.replace(OPENED, kind="person_seen", evidence=(seen,))
    other = dataclasses.replace(biden, evidence=(dataclasses.replace(seen, person="Jill"),))
    crowd = dataclasses.replace(OPENED, kind="crowd", evidence=(Sighting("e3", 3, S),))
    records = (biden, other, OPENED, crowd)  # OPENED: a stranger
    watch = TargetSettings(url="json://x", persons="joe-biden")
    assert [wants(a, watch) for a in records] == [True, False, False, True]
    both = TargetSettings(url="json://x", persons="Joe Biden, stranger")
    assert [wants(a, both) for a in records] == [True, False, True, True]
    quiet = TargetSettings(url="json://x", mute="Jill,stranger")
    assert [wants(a, quiet) for a in records] == [True, False, False, True]
    with pytest.raises(ConfigError, match="persons"):
        TargetSettings(url="json://x", persons="!!")
