"""What the page shows, from the records the reader hands over: sampling, matching events to their
frames, figures, the alerts' lifecycle."""

import time

from facestream.dashboard.state import KEPT_FRAMES, RATE_WINDOW_S, CameraView, DashboardState
from facestream.schemas import Alert, DetectionEvent, Face, Frame, ModelRef, Person, PoseEvent, Sighting

MODEL = ModelRef("yunet", "2023mar", "0" * 64)


def frame(seq: int, camera: str = "gate") -> Frame:
    return Frame(camera, seq, seq * 1_000_000, 640, 480, b"\xff\xd8jpeg")


def event(seq: int, faces: int = 1, camera: str = "gate", latency_s: float = 0.2) -> DetectionEvent:
    found = tuple(Face((10.0, 20.0, 110.0, 140.0), 0.9) for _ in range(faces))
    capture = seq * 1_000_000
    return DetectionEvent(f"e{seq}", camera, seq, capture, capture + int(latency_s * 1e9), MODEL, 640, 480, found)


def alert(state: str, alert_id: str = "a1", updated: int = 1) -> Alert:
    sighting = Sighting("e1", 1, 1_000_000, (1.0, 2.0, 3.0, 4.0), 0.1)
    return Alert(alert_id, "stranger", state, "gate", 1_000_000, updated, (sighting,), 2)


def test_a_tile_carries_its_camera_s_zones() -> None:
    state = DashboardState(
        frame_rate=2.0, alerts_kept=10, zones={"gate": {"door": ((0.0, 0.0), (0.5, 0.0), (0.5, 1.0))}}
    )
    state.on_frame(frame(0))
    state.on_frame(frame(0, camera="hall"))
    gate, hall = state.snapshot()["cameras"]
    assert gate["zones"] == [{"name": "door", "corners": [[0.0, 0.0], [0.5, 0.0], [0.5, 1.0]]}]
    assert "zones" not in hall


def test_frames_are_kept_at_the_page_s_rate_per_camera() -> None:
    state = DashboardState(frame_rate=2.0, alerts_kept=10)
    for seq in range(5):
        state.on_frame(frame(seq))  # at once: only the first is kept
    state.on_frame(frame(0, camera="door"))  # another camera keeps its own
    assert [f.seq for f in state.cameras["gate"].frames] == [0]
    assert state.kept_frame("door", 0).jpeg == b"\xff\xd8jpeg"
    time.sleep(0.55)
    state.on_frame(frame(9))
    assert [f.seq for f in state.cameras["gate"].frames] == [0, 9]


def test_a_tile_shows_the_newest_frame_whose_events_arrived_with_what_they_found() -> None:
    state = DashboardState(frame_rate=float("inf"), alerts_kept=10)
    for seq in (1, 2, 3):
        state.on_frame(frame(seq))
    state.on_event(event(2, faces=2))
    state.on_event(PoseEvent("p2", "gate", 2, 2_000_000, 2_100_000, MODEL, 640, 480, (person(),)))
    state.on_event(event(7))  # its frame was not kept: counted, not drawn
    tile = state.snapshot()["cameras"][0]
    assert tile["frame_seq"] == 2 and len(tile["faces"]) == 2 and len(tile["people"]) == 1
    assert tile["events_total"] == 3 and tile["latency_ms"] == 200
    assert state.kept_frame("gate", 99) is None


def test_a_camera_keeps_only_its_last_frames() -> None:
    state = DashboardState(frame_rate=float("inf"), alerts_kept=10)
    for seq in range(KEPT_FRAMES + 5):
        state.on_frame(frame(seq))
    assert state.kept_frame("gate", 0) is None and state.kept_frame("gate", KEPT_FRAMES + 4) is not None
    assert state.snapshot()["cameras"][0]["frame_seq"] == KEPT_FRAMES + 4  # no events yet: the newest


def test_an_alert_s_records_make_one_entry_with_its_lifecycle_newest_first() -> None:
    state = DashboardState(frame_rate=2.0, alerts_kept=2)
    state.on_alert(alert("new"))
    state.on_alert(alert("new", alert_id="a2"))
    state.on_alert(alert("update", updated=2))
    state.on_alert(alert("end", updated=3))
    alerts = state.snapshot()["alerts"]
    assert [a["alert_id"] for a in alerts] == ["a1", "a2"]
    assert alerts[0]["lifecycle"] == [["new", 1], ["update", 1], ["end", 1]] and alerts[0]["state"] == "end"
    state.on_alert(alert("new", alert_id="a3"))  # over alerts_kept: the oldest goes
    assert [a["alert_id"] for a in state.snapshot()["alerts"]] == ["a3", "a1"]


def test_an_alert_open_for_long_keeps_runs_of_states_not_every_record() -> None:
    state = DashboardState(frame_rate=2.0, alerts_kept=2)
    state.on_alert(alert("new"))
    for updated in range(2, 10_002):  # a crowd updated every 2 s for five and a half hours
        state.on_alert(alert("update", updated=updated))
    assert state.snapshot()["alerts"][0]["lifecycle"] == [["new", 1], ["update", 10_000]]


def test_the_version_changes_only_when_something_shown_does() -> None:
    state = DashboardState(frame_rate=2.0, alerts_kept=2)
    before = state.version
    state.on_groups([{"group": "g", "members": [], "lag": {}}])
    assert state.version == before + 1
    state.on_groups([{"group": "g", "members": [], "lag": {}}])
    assert state.version == before + 1


def person() -> Person:
    return Person((0.0, 0.0, 50.0, 200.0), 0.8, tuple((10.0, 10.0 * k, 0.9) for k in range(17)))


def test_a_camera_keeps_only_the_last_window_of_events_with_no_page_open() -> None:
    # The events behind a tile's figures were pruned only when a page asked: a dashboard nobody
    # watched grew by one entry per event (about 9,000 a second at 300 cameras).
    camera = CameraView("gate")
    for i in range(10_000):
        camera.note_event(i * 0.01, 0.1)  # 100 s of events, 100 a second
    assert len(camera.events) <= RATE_WINDOW_S * 100 + 1 and camera.events_total == 10_000
