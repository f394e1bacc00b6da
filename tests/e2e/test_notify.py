"""The notifier as a deployment runs it (``facestream notify``) on the real broker, sending to real
receivers on this machine: webhooks (an HTTP server), Mosquitto (MQTT) and an SMTP server (e-mail).
A flood is what each target's rules promise; a target that is down gets everything once it is back,
across a notifier killed in between; nothing twice."""

import base64
import dataclasses
import email
import json
import signal
import subprocess
import time
import uuid
from pathlib import Path

import pytest
from helpers.http import free_port, scrape
from helpers.producer import wait_until
from helpers.prometheus import check_metrics
from helpers.receiver import Mailbox, Mosquitto, Webhook
from helpers.store import OPENED, S

from facestream import kafka_clients, kafka_topics
from facestream.notifier.config import NotifierConfig, notifier_command
from facestream.schemas import Frame, Sighting, pack_alert, pack_frame


@pytest.fixture
def names(bootstrap: str) -> dict[str, str]:
    tag = uuid.uuid4().hex[:10]
    names = {part: f"n-{tag}.{part}" for part in ("alerts", "frames")}
    kafka_topics.ensure_topics({names["alerts"]: 2, names["frames"]: 1}, bootstrap)
    return {**names, "group": f"n-{tag}.notifier"}


def config(names: dict, tmp_path: Path, targets: dict, **changes) -> NotifierConfig:
    return NotifierConfig(
        targets=targets,
        group=names["group"],
        alerts_topic=names["alerts"],
        frames_topic=names["frames"],
        database=f"sqlite:///{tmp_path / 'alerts.db'}",
        dashboard_url="http://nvr:8080",
        stats_interval_s=1.0,
        **changes,
    )


def send_alerts(bootstrap: str, topic: str, alerts: list) -> None:
    producer = kafka_clients.producer("notify-test", bootstrap)
    for alert in alerts:
        kafka_clients.send(producer, topic, pack_alert(alert), alert.camera_id.encode())
    assert producer.flush(30) == 0


def flood(count: int, cameras: int, start_ns: int) -> list:
    """``count`` new stranger alerts over 10 s of capture time, on ``cameras`` cameras in turn; every other
    one's face scored 0.95, the rest 0.5."""
    return [
        dataclasses.replace(
            OPENED,
            alert_id=f"flood-{i:03d}",
            camera_id=f"cam-{i % cameras}",
            started_ts_ns=start_ns + i * S // 10,
            updated_ts_ns=start_ns + i * S // 10,
            evidence=(dataclasses.replace(OPENED.evidence[0], score=0.5 if i % 2 else 0.95),),
        )
        for i in range(count)
    ]


def test_a_flood_reaches_each_target_as_its_rules_say(
    names: dict, bootstrap: str, sample_dir: Path, tmp_path: Path
) -> None:
    hooks = {name: Webhook().start() for name in ("calm", "all", "capped", "sure")}
    mqtt, mailbox = Mosquitto(), Mailbox()
    start = time.time_ns() - 60 * S
    alerts = flood(100, 5, start)
    frame = Frame("cam-0", 7, start, 1280, 2082, (sample_dir / "biden.jpg").read_bytes())
    alerts[0] = dataclasses.replace(
        alerts[0], evidence=(Sighting("e7", 7, start, (574.0, 225.0, 820.0, 546.0), 0.1, 0.95),)
    )
    producer = kafka_clients.producer("notify-test", bootstrap)
    kafka_clients.send(producer, names["frames"], pack_frame(frame), b"cam-0")
    assert producer.flush(30) == 0
    send_alerts(bootstrap, names["alerts"], alerts)
    targets = {
        "calm": {"url": hooks["calm"].url},  # the defaults: new only, a minute per camera and kind, 30 an hour
        "all": {"url": hooks["all"].url, "cooldown_s": 0, "max_per_hour": 1000},
        "capped": {"url": hooks["capped"].url, "cooldown_s": 0, "max_per_hour": 10},
        "sure": {"url": hooks["sure"].url, "cooldown_s": 0, "max_per_hour": 1000, "min_score": 0.9},
        "home": {"url": mqtt.url("facestream/alerts")},
        "mail": {"url": mailbox.url("ops@facestream.test"), "cameras": "cam-0"},
    }
    try:
        done = subprocess.run(
            notifier_command(config(names, tmp_path, targets, stop_after_idle_s=5.0)),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        time.sleep(1.0)  # the last MQTT messages reach the subscriber
        counts = {name: len(hook.posts) for name, hook in hooks.items()}
        assert counts == {"calm": 5, "all": 100, "capped": 10, "sure": 50}, done.stderr[-5000:]
        assert len(mqtt.payloads("facestream/alerts")) == 5
        (mail,) = mailbox.messages
    finally:
        for receiver in (*hooks.values(), mqtt, mailbox):
            receiver.stop()
    # cameras' alerts come in partition order, not in turn: each camera's first alert is what it posts
    titles = sorted(post["title"] for post in hooks["calm"].posts)
    assert titles == [f"Stranger at cam-{i}" for i in range(5)]
    (first,) = [post for post in hooks["calm"].posts if post["title"] == "Stranger at cam-0"]
    assert "http://nvr:8080/history?alert=flood-000" in first["message"]
    (picture,) = first["attachments"]
    assert base64.b64decode(picture["base64"])[:2] == b"\xff\xd8"  # the evidence frame, read back from Kafka
    parsed = email.message_from_bytes(mail)
    assert parsed["Subject"] == "Stranger at cam-0" and parsed["To"] == "ops@facestream.test"
    assert any(part.get_content_type() == "image/jpeg" for part in parsed.walk())


def test_a_target_that_is_down_gets_everything_once_back_across_a_killed_notifier(
    names: dict, bootstrap: str, tmp_path: Path
) -> None:
    hook = Webhook()  # not listening yet: the target is down
    targets = {"ops": {"url": hook.url, "cooldown_s": 0}}
    settings = config(names, tmp_path, targets, retry_max_s=1.0, http_port=free_port())
    send_alerts(bootstrap, names["alerts"], flood(20, 4, time.time_ns() - 60 * S))
    log = tmp_path / "notifier.log"
    with open(log, "ab") as out:
        notifier = subprocess.Popen(notifier_command(settings), stdout=out, stderr=subprocess.STDOUT)
    time.sleep(6.0)  # owed, tried, failed
    notifier.send_signal(signal.SIGKILL)
    notifier.wait(timeout=30)
    hook.start()  # back
    with open(log, "ab") as out:
        notifier = subprocess.Popen(notifier_command(settings), stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_until(lambda: len(hook.posts) >= 20, 60, "the owed messages")
        later = [dataclasses.replace(a, alert_id=f"later-{i}") for i, a in enumerate(flood(10, 2, time.time_ns()))]
        send_alerts(bootstrap, names["alerts"], later)
        wait_until(lambda: len(hook.posts) >= 30, 60, "the later messages")
        time.sleep(3.0)  # anything sent twice would come now
        metrics = scrape(settings.http_port)
    finally:
        notifier.send_signal(signal.SIGTERM)
        notifier.wait(timeout=60)
        hook.stop()
    said = log.read_text()
    assert "target ops (json://***)" in said and "trying again" in said  # failures logged by target name, URL masked
    ids = [post["message"].rsplit("alert=", 1)[1] for post in hook.posts]
    assert len(ids) == 30 == len(set(ids))
    check_metrics(metrics)  # as an operator's lint reads the notifier's /metrics


def test_a_state_target_mirrors_what_is_open_in_retained_topics_for_home_assistant(
    names: dict, bootstrap: str, sample_dir: Path, tmp_path: Path
) -> None:
    mqtt = Mosquitto()
    start = time.time_ns() - 60 * S
    frame = Frame("door/1", 7, start, 1280, 2082, (sample_dir / "biden.jpg").read_bytes())
    producer = kafka_clients.producer("notify-test", bootstrap)
    kafka_clients.send(producer, names["frames"], pack_frame(frame), b"door/1")
    assert producer.flush(30) == 0
    first = dataclasses.replace(
        OPENED,
        alert_id="a",
        camera_id="door/1",
        started_ts_ns=start,
        updated_ts_ns=start,
        evidence=(Sighting("e7", 7, start, (574.0, 225.0, 820.0, 546.0), 0.1, 0.95),),
    )
    second = dataclasses.replace(first, alert_id="b", updated_ts_ns=start + S)  # a second stranger, at once
    records = [
        first,
        second,
        dataclasses.replace(first, state="update", updated_ts_ns=start + 2 * S),
        dataclasses.replace(first, state="end", updated_ts_ns=start + 9 * S, ended_ts_ns=start + 8 * S),
    ]
    send_alerts(bootstrap, names["alerts"], records)
    targets = {"home": {"url": mqtt.url("cams"), "mqtt_state": True}}
    settings = config(names, tmp_path, targets, retry_max_s=1.0)
    base = "cams/door_1/stranger"
    with open(tmp_path / "notifier.log", "ab") as out:
        notifier = subprocess.Popen(notifier_command(settings), stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_until(lambda: len(mqtt.payloads("cams/events")) >= 4, 60, "the four records")
        notifier.send_signal(signal.SIGKILL)  # the broker says it offline: its will
        notifier.wait(timeout=30)
        wait_until(lambda: mqtt.payloads("cams/available")[-1:] == [b"offline"], 30, "the notifier's will")
        retained = mqtt.retained()
        ended = dataclasses.replace(second, state="end", updated_ts_ns=start + 10 * S, ended_ts_ns=start + 9 * S)
        send_alerts(bootstrap, names["alerts"], [ended])
        with open(tmp_path / "notifier.log", "ab") as out:
            notifier = subprocess.Popen(notifier_command(settings), stdout=out, stderr=subprocess.STDOUT)
        wait_until(lambda: mqtt.payloads(base)[-1:] == [b"0"], 60, "the second stranger's end")
        assert mqtt.retained()["cams/available"] == b"online"
    finally:
        notifier.send_signal(signal.SIGTERM)
        notifier.wait(timeout=60)
        mqtt.stop()
    # At least once: a record published just before the SIGKILL, and not yet marked, comes again.
    events = [json.loads(p) for p in mqtt.payloads("cams/events")]
    records = list(dict.fromkeys((e["type"], e["alert"]["alert_id"]) for e in events))
    assert records == [("new", "a"), ("new", "b"), ("update", "a"), ("end", "a"), ("end", "b")]
    counts = [c for i, c in enumerate(mqtt.payloads(base)) if i == 0 or c != mqtt.payloads(base)[i - 1]]
    assert counts == [b"1", b"2", b"1", b"0"]  # 2 stays 2 over a's update
    assert retained[base] == b"1" and json.loads(retained[f"{base}/alert"])["state"] == "end"
    assert retained[f"{base}/snapshot"][:2] == b"\xff\xd8"  # the evidence frame, read back from Kafka
    sensor = json.loads(retained["homeassistant/binary_sensor/facestream_cams_door_1_stranger/config"])
    assert sensor["state_topic"] == base and sensor["availability_topic"] == "cams/available"
    camera = json.loads(retained["homeassistant/camera/facestream_cams_door_1_stranger_snapshot/config"])
    assert camera["topic"] == f"{base}/snapshot"
