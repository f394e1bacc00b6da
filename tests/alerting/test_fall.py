"""The fall rule on synthetic pose sequences at 10 fps: stick figures whose torso angle and hip height
follow a fall, a slow sit, a bend, lying down slowly, walking past, leaving the picture mid-fall."""

import pytest
from helpers.alert import body, poses

from facestream.alerting.rules import fall
from facestream.alerting.rules.fall import FallSettings
from facestream.schemas import KEYPOINT_NAMES

FPS = 10
SETTINGS = FallSettings()
STANDING = (300.0, 300.0, 0.0)  # hips' midpoint x, y and torso angle; the torso is 100 px long
LYING = (330.0, 430.0, 88.0)  # hips 1.3 torso lengths lower, torso horizontal


def hold(pose: tuple, seconds: float) -> list[tuple | None]:
    return [pose] * int(seconds * FPS)


def move(start: tuple, end: tuple, seconds: float) -> list[tuple]:
    steps = max(int(seconds * FPS), 1)
    return [tuple(a + (b - a) * (i + 1) / steps for a, b in zip(start, end, strict=True)) for i in range(steps)]


def run(timeline: list[tuple | None], settings: FallSettings = SETTINGS, others: tuple = ()):
    """The alerts of one camera whose frames show the timeline's pose (None: nobody) and ``others``."""
    state: dict = {}
    alerts = []
    for seq, pose in enumerate(timeline):
        people = ([] if pose is None else [body(*pose)]) + [body(*o) for o in others]
        alerts += [(seq / FPS, a) for a in fall.step(state, poses(seq, seq / FPS, *people), settings)]
    return alerts


def test_a_fall_held_down_alerts_once_then_ends_when_the_person_is_up_again() -> None:
    timeline = hold(STANDING, 2) + move(STANDING, LYING, 0.5) + hold(LYING, 5) + hold(STANDING, 2)
    alerts = run(timeline)
    assert [a.state for _, a in alerts] == ["new", "update", "end"]
    new_at, new = alerts[0]
    assert new_at == pytest.approx(2.0 + 0.3 + SETTINGS.hold_s, abs=0.15)  # down (60 deg) ~0.3 s into it, held 2 s
    assert len({a.alert_id for _, a in alerts}) == 1 and new.kind == "fall" and new.count == 1
    assert alerts[-1][0] == pytest.approx(7.5 + SETTINGS.recovery_s, abs=0.15)
    # Ended when the person had been upright recovery-s, by the first upright frame (7.5 s).
    assert alerts[-1][1].ended_ts_ns / 1e9 == pytest.approx(7.5 + SETTINGS.recovery_s, abs=0.15)
    assert len(new.evidence) == SETTINGS.evidence and new.evidence[0].box is not None and new.evidence[0].score


def test_sitting_down_slowly_is_no_fall() -> None:
    seated = (300.0, 370.0, 12.0)  # hips 0.7 torso lengths lower, torso nearly upright
    assert run(hold(STANDING, 2) + move(STANDING, seated, 2) + hold(seated, 5)) == []


def test_bending_over_and_rising_is_no_fall() -> None:
    bent = (300.0, 300.0, 90.0)  # torso horizontal, hips where they were
    assert run(hold(STANDING, 2) + move(STANDING, bent, 0.5) + hold(bent, 4) + move(bent, STANDING, 0.5)) == []


def test_a_stumble_up_again_before_the_hold_is_no_fall() -> None:
    timeline = hold(STANDING, 2) + move(STANDING, LYING, 0.5) + hold(LYING, 1) + hold(STANDING, 3)
    assert run(timeline) == []


def test_lying_down_slowly_alerts_only_when_configured() -> None:
    timeline = hold(STANDING, 2) + move(STANDING, LYING, 5) + hold(LYING, 5)
    assert run(timeline) == []
    alerts = run(timeline, FallSettings(slow_descent_alerts=True))
    assert [a.state for _, a in alerts][:1] == ["new"]


def test_walking_past_is_no_fall() -> None:
    walk = move((-50.0, 300.0, 5.0), (800.0, 310.0, 5.0), 6)
    assert run(hold(None, 1) + walk + hold(None, 3)) == []


def test_leaving_the_picture_mid_fall_alerts_nothing_and_a_fallen_person_leaving_ends_it() -> None:
    assert run(hold(STANDING, 2) + move(STANDING, LYING, 0.5) + hold(None, 5)) == []
    alerts = run(hold(STANDING, 2) + move(STANDING, LYING, 0.5) + hold(LYING, 3) + hold(None, 4))
    assert [a.state for _, a in alerts] == ["new", "end"]
    assert alerts[-1][0] == pytest.approx(5.5 + SETTINGS.lost_after_s, abs=0.15)
    assert alerts[-1][1].ended_ts_ns / 1e9 == pytest.approx(5.5 + SETTINGS.lost_after_s, abs=0.15)  # last seen + lost


def test_only_the_person_who_falls_alerts() -> None:
    timeline = hold(STANDING, 2) + move(STANDING, LYING, 0.5) + hold(LYING, 4)
    alerts = run(timeline, others=((600.0, 300.0, 3.0),))  # someone standing nearby all along
    assert [a.state for _, a in alerts] == ["new", "update"]


def test_a_person_without_visible_hips_only_keeps_their_track() -> None:
    person = body(*STANDING)
    hidden = {KEYPOINT_NAMES.index("left_hip"), KEYPOINT_NAMES.index("right_hip")}
    keypoints = tuple((x, y, 0.05) if i in hidden else (x, y, s) for i, (x, y, s) in enumerate(person.keypoints))
    assert fall.torso(type(person)(person.box, person.score, keypoints), SETTINGS.min_keypoint_score) is None


def test_settings_refuse_an_upright_angle_above_the_down_angle() -> None:
    with pytest.raises(ValueError, match="upright_deg"):
        FallSettings(upright_deg=70, down_deg=60)
