"""Schedules: a rule runs on a camera only at given hours of given days, in the camera's time zone."""

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
from helpers.alert import enrolled, event, face, person

from facestream.alerting.config import AlertingConfig
from facestream.alerting.rules.camera import on_event
from facestream.alerting.rules.schedule import Schedule
from facestream.errors import ConfigError

HOUR = 3600.0  # capture times below are seconds after 1970-01-01 00:00 UTC, a Thursday


def at(text: str, day: int, hour: int, minute: int = 0) -> bool:
    """Whether ``text`` is active on December ``day`` 2026 (the 7th is a Monday) at hour:minute."""
    return Schedule.parse(text).active(datetime(2026, 12, day, hour, minute))


def test_a_window_without_days_is_every_day_and_its_end_is_not_in_it() -> None:
    assert all(at("08:00-18:00", day, 8) and at("08:00-18:00", day, 17, 59) for day in range(7, 14))
    assert not at("08:00-18:00", 9, 18) and not at("08:00-18:00", 9, 7, 59)
    assert all(at("00:00-24:00", 9, hour) for hour in range(24))


def test_a_window_past_midnight_belongs_to_the_day_it_starts() -> None:
    friday_nights = "fri 22:00-06:00"
    assert at(friday_nights, 11, 22) and at(friday_nights, 12, 5, 59)  # Friday 22:00, Saturday 05:59
    assert not at(friday_nights, 12, 6) and not at(friday_nights, 12, 23) and not at(friday_nights, 11, 5)


def test_days_as_lists_and_ranges_that_wrap_past_sunday() -> None:
    assert [at("mon-wed,fri 10:00-11:00", day, 10) for day in range(7, 14)] == [1, 1, 1, 0, 1, 0, 0]
    assert [at("fri-mon 10:00-11:00", day, 10) for day in range(7, 14)] == [1, 0, 0, 0, 1, 1, 1]
    assert at("mon 09:00-10:00; sat,sun 00:00-24:00", 13, 3) and not at("mon 09:00-10:00; sat,sun 00:00-24:00", 8, 9)


def test_hours_are_wall_clock_hours_across_daylight_saving() -> None:
    # Berlin skipped 02:00-03:00 on 29 March 2026: a 01:00-04:00 window is two real hours that night.
    night, berlin = Schedule.parse("01:00-04:00"), ZoneInfo("Europe/Berlin")
    utc_hours = [0.5, 1.5, 2.5]  # 01:30 CET, 03:30 CEST, 04:30 CEST
    base = datetime(2026, 3, 29, tzinfo=ZoneInfo("UTC")).timestamp()
    assert [night.active(datetime.fromtimestamp(base + h * HOUR, berlin)) for h in utc_hours] == [True, True, False]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "at least one window"),
        ("nightly", "a schedule window is"),
        ("08:00-08:00", "start and end differ"),
        ("24:00-06:00", "starts before 24:00"),
        ("07:60-08:00", "00:00 to 24:00"),
        ("weekdays 08:00-18:00", "days are mon"),
    ],
)
def test_a_bad_schedule_says_what_is_wrong(text: str, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        Schedule.parse(text)


def test_a_camera_takes_the_services_schedules_rule_by_rule_and_its_own_time_zone() -> None:
    config = AlertingConfig(
        schedules={"stranger": "22:00-06:00", "crowd": "08:00-18:00"},
        cameras={"gate": {"schedules": {"stranger": "00:00-24:00"}, "timezone": "Asia/Tokyo"}},
    )
    noon_utc = int(12 * HOUR * 1e9)
    lobby, gate = config.for_camera("lobby"), config.for_camera("gate")
    assert lobby.off("stranger", noon_utc) == "the stranger rule is outside its schedule (22:00-06:00, UTC)"
    assert lobby.off("crowd", noon_utc) is None
    assert gate.off("stranger", noon_utc) is None  # its own schedule
    assert gate.off("crowd", noon_utc) is not None  # the service's 08:00-18:00, but 21:00 in Tokyo
    with pytest.raises(ConfigError, match="schedules are for the rules stranger, crowd, fall, person_seen"):
        AlertingConfig(schedules={"camera_offline": "08:00-18:00"})
    with pytest.raises(ConfigError, match="camera 'gate': --timezone: unknown time zone 'Gate/Town'"):
        AlertingConfig(cameras={"gate": {"timezone": "Gate/Town"}})


def test_a_rule_raises_nothing_outside_its_hours_and_ends_its_alert_when_they_end() -> None:
    gallery, settings = enrolled(), AlertingConfig(schedules={"stranger": "22:00-06:00"}).for_camera("gate")
    stranger = face(person(2))
    by_day = [a for i in range(6) for a in on_event({}, event(i, 12 * HOUR + i * 0.5, stranger), gallery, settings)]
    assert by_day == []
    state: dict = {}
    night = [event(i, 6 * HOUR - 3 + i * 0.5, stranger) for i in range(6)]  # 05:59:57 to 05:59:59.5
    opened = [a for e in night for a in on_event(state, e, gallery, settings)]
    assert [(a.kind, a.state) for a in opened] == [("stranger", "new")]
    ended = on_event(state, event(6, 6 * HOUR, stranger), gallery, settings)  # 06:00: the schedule ends
    assert [(a.kind, a.state, a.ended_ts_ns) for a in ended] == [("stranger", "end", int(6 * HOUR * 1e9))]
    assert ended[0].reason == "the stranger rule is outside its schedule (22:00-06:00, UTC)"
    later = [on_event(state, event(7 + i, 6 * HOUR + 1 + i, stranger), gallery, settings) for i in range(3)]
    assert later == [[], [], []]
    again = [a for i in range(3) for a in on_event(state, event(20 + i, 22 * HOUR + i, stranger), gallery, settings)]
    assert [(a.kind, a.state) for a in again] == [("stranger", "new")] and again[0].alert_id != opened[0].alert_id
