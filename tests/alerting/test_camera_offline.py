"""The camera_offline rule on the producers' status records, step by step."""

from facestream.alerting.rules.camera_offline import OfflineSettings, on_silence, on_status
from facestream.schemas import CameraStatus

S = 1_000_000_000
SETTINGS = OfflineSettings(offline_after_s=30)


def status(t: float, state: str = "streaming", last_frame: float | None = None, **changes) -> CameraStatus:
    """The door camera's status at ``t`` seconds, its last frame sent at ``last_frame`` seconds."""
    fields = {
        "camera_id": "door",
        "ts_ns": int(t * S),
        "state": state,
        "source": "rtsp://***@10.0.0.7/s1",
        "frames_sent": 0,
        "attempts": 0,
        "interval_ms": 5000,
        "last_frame_ts_ns": None if last_frame is None else int(last_frame * S),
        **changes,
    }
    return CameraStatus(**fields)


def feed(state: dict, *statuses: CameraStatus) -> list:
    alerts = []
    for s in statuses:
        alerts += on_status(state, s, s.ts_ns, SETTINGS) or []
    return alerts


def test_a_camera_that_sends_frames_is_never_offline() -> None:
    state: dict = {}
    assert feed(state, *(status(t, last_frame=t - 0.1) for t in range(0, 300, 5))) == []


def test_a_camera_down_for_longer_than_the_limit_opens_one_alert_that_ends_when_frames_come_back() -> None:
    state: dict = {}
    up = [status(t, last_frame=t - 0.1) for t in (0, 5, 10)]
    down = [
        status(t, "reconnecting", last_frame=9.9, attempts=t // 5, error="Connection refused") for t in range(15, 60, 5)
    ]
    back = [status(61, last_frame=60.8), status(65, last_frame=64.9)]
    alerts = feed(state, *up, *down, *back)
    assert [a.state for a in alerts] == ["new", "end"]
    opened, ended = alerts
    assert opened.kind == "camera_offline" and opened.alert_id == ended.alert_id
    assert opened.started_ts_ns == int(9.9 * S) and opened.updated_ts_ns == 40 * S  # 30 s after the last frame
    assert opened.reason == "reconnecting: Connection refused" and opened.count == 8 and opened.evidence == ()
    assert ended.ended_ts_ns == int(60.8 * S) and ended.reason == "frames again"


def test_replayed_statuses_change_nothing() -> None:
    state: dict = {}
    statuses = [status(0, last_frame=0), *(status(t, "reconnecting", last_frame=0) for t in range(5, 45, 5))]
    first = feed(state, *statuses)
    assert [a.state for a in first] == ["new"]
    assert feed(state, *statuses) == []


def test_a_camera_that_never_sent_a_frame_is_offline_from_when_its_producer_first_spoke_of_it() -> None:
    state: dict = {}
    alerts = feed(
        state, *(status(t, "reconnecting", error="no answer within 10 s (timed out)") for t in range(100, 140, 5))
    )
    assert [a.state for a in alerts] == ["new"] and alerts[0].started_ts_ns == 100 * S


def test_a_producer_gone_quiet_makes_its_cameras_offline_by_the_workers_clock() -> None:
    state: dict = {}
    feed(state, status(0, last_frame=0), status(5, last_frame=4.9))
    assert on_silence(state, "door", 30 * S, SETTINGS) == []  # 25 s of quiet
    (opened,) = on_silence(state, "door", 36 * S, SETTINGS)
    assert opened.state == "new" and opened.reason == "no word from its producer for 31 s"
    assert on_silence(state, "door", 40 * S, SETTINGS) == []  # once
    restarted = feed(state, status(50, "connecting"), status(52, last_frame=51.5))
    assert [a.state for a in restarted] == ["end"] and restarted[0].alert_id == opened.alert_id


def test_silence_the_worker_was_not_there_to_hear_does_not_count() -> None:
    # The whole machine stood still for 46 s (seen in CI): the worker's clock jumped, and the producer's
    # next status, due a second later, had not arrived yet. Quiet counts from when the worker listened again.
    state: dict = {}
    feed(state, status(0, last_frame=0), status(5, last_frame=4.9))
    assert on_silence(state, "door", 51 * S, SETTINGS, listening_since_ns=50 * S) == []
    (opened,) = on_silence(state, "door", 81 * S, SETTINGS, listening_since_ns=50 * S)
    assert opened.reason == "no word from its producer for 31 s"


def test_a_camera_stopped_on_purpose_is_not_offline_and_its_outage_ends() -> None:
    state: dict = {}
    feed(state, status(0, last_frame=0), status(1, "stopped", last_frame=0))
    assert on_silence(state, "door", 100 * S, SETTINGS) == []
    state = {}
    alerts = feed(
        state, status(0, last_frame=0), status(40, "reconnecting", last_frame=0), status(41, "stopped", last_frame=0)
    )
    assert [(a.state, a.reason) for a in alerts][1] == ("end", "its producer stopped serving it")


def test_a_camera_served_again_after_its_producer_stopped_is_a_new_alert_never_a_second_life() -> None:
    """An outage ended by its producer's ``stopped``; served again later, the camera never streams: the
    second outage counts from the new service and so has an id of its own."""
    state: dict = {}
    first = feed(
        state, status(0, last_frame=0), status(40, "reconnecting", last_frame=0), status(50, "stopped", last_frame=0)
    )
    assert [a.state for a in first] == ["new", "end"]
    second = feed(state, *(status(t, "reconnecting", last_frame=0) for t in range(100, 150, 5)))
    assert [a.state for a in second] == ["new"] and second[0].started_ts_ns == 100 * S
    assert second[0].alert_id != first[0].alert_id


def test_a_producer_s_longest_error_still_makes_a_reason_the_contract_takes() -> None:
    from facestream.schemas import pack_alert

    (opened,) = feed({}, status(0, last_frame=0), status(40, "reconnecting", last_frame=0, error="x" * 1000))
    assert len(opened.reason) == 1000 and opened.reason.endswith("…")
    pack_alert(opened)
