"""The notifier's delivery decisions as pure functions: the retry schedule, which failures are logged,
and what a state target publishes for a record (topics, retain flags, Home Assistant's discovery).
The real MQTT broker, HTTP receiver and mail server are in tests/e2e/test_notify.py."""

import dataclasses
import json

from helpers.alert import SFACE
from helpers.store import OPENED

from facestream.notifier.delivery import retry_pause, worth_saying
from facestream.notifier.mqtt_state import discovery, mqtt_fields, record_messages
from facestream.notifier.rules import track_open


def test_a_failing_message_waits_twice_as_long_each_time_up_to_the_limit() -> None:
    assert [retry_pause(n, 300.0) for n in range(10)] == [1, 2, 4, 8, 16, 32, 64, 128, 256, 300]
    assert retry_pause(10_000, 300.0) == 300.0  # no overflow after days of failures


def test_failures_are_logged_at_first_then_every_twentieth() -> None:
    assert [n for n in range(70) if worth_saying(n)] == [0, 1, 2, 20, 40, 60]


def test_open_alerts_are_counted_per_camera_and_kind_until_each_ends() -> None:
    state: dict = {}
    one, two = dataclasses.replace(OPENED, alert_id="a1"), dataclasses.replace(OPENED, alert_id="a2")
    counts = [
        track_open(state, one),
        track_open(state, dataclasses.replace(one, state="update")),  # the same alert: still one
        track_open(state, two),
        track_open(state, dataclasses.replace(one, state="end")),
        track_open(state, dataclasses.replace(one, state="end")),  # an end replayed: no change
        track_open(state, dataclasses.replace(two, state="end")),
    ]
    assert counts == [1, 1, 2, 1, 1, 0] and state["open"] == {}


def test_a_new_alert_publishes_its_count_record_snapshot_retained_and_its_event_not() -> None:
    alert = dataclasses.replace(OPENED, camera_id="gate/1", kind="stranger", state="new")
    record = {**alert.fields(), "open": 1, "url": "http://dash/a"}
    messages = record_messages(alert, "home", record, b"jpeg")
    assert [(topic, retained) for topic, _, retained in messages] == [
        ("home/gate_1/stranger", True),  # a camera id is one topic level
        ("home/gate_1/stranger/alert", True),
        ("home/gate_1/stranger/snapshot", True),
        ("home/events", False),
    ]
    assert messages[0][1] == "1" and json.loads(messages[3][1])["type"] == "new"
    assert len(record_messages(alert, "home", record, None)) == 3  # no picture: no snapshot message


def test_a_strangers_face_embedding_is_not_told_to_mqtt() -> None:
    alert = dataclasses.replace(OPENED, kind="stranger", face=b"\x00\x3c" * 128, embedder=SFACE)
    fields = mqtt_fields(alert)
    assert "face" not in fields and "embedder" not in fields and fields["alert_id"] == alert.alert_id
    json.dumps(fields)  # what was bytes would not be JSON


def test_home_assistant_is_told_of_a_sensor_and_for_pictured_kinds_a_camera() -> None:
    alert = dataclasses.replace(OPENED, camera_id="gate", kind="stranger")
    found = discovery(alert, "home", "homeassistant", "home/available")
    sensor = json.loads(found[0][1])
    assert found[0][0] == "homeassistant/binary_sensor/facestream_home_gate_stranger/config" and found[0][2]
    assert sensor["state_topic"] == "home/gate/stranger" and sensor["availability_topic"] == "home/available"
    assert json.loads(found[1][1])["topic"] == "home/gate/stranger/snapshot"
    offline = dataclasses.replace(OPENED, camera_id="gate", kind="camera_offline")
    assert len(discovery(offline, "home", "homeassistant", "home/available")) == 1  # no picture to show
