"""The notifier as a deployment runs it (``facestream notify``) on the real broker, sending to real
receivers on this machine: webhooks (an HTTP server), Mosquitto (MQTT) and an SMTP server (e-mail).
A flood is what each target's rules promise; a target that is down gets everything once it is back,
across a notifier killed in between; nothing twice."""

import base64
import dataclasses
import email
import signal
import subprocess
import time
import uuid
from pathlib import Path

import pytest
from producer_helpers import wait_until
from receiver_helpers import Mailbox, Mosquitto, Webhook
from store_helpers import OPENED, S

from facestream import kafka_clients
from facestream.notifier.config import NotifierConfig, notifier_command
from facestream.schemas import Frame, Sighting, pack_alert, pack_frame


@pytest.fixture
def names(bootstrap: str) -> dict[str, str]:
    tag = uuid.uuid4().hex[:10]
    names = {part: f"n-{tag}.{part}" for part in ("alerts", "frames")}
    kafka_clients.ensure_topics({names["alerts"]: 2, names["frames"]: 1}, bootstrap)
    return {**names, "group": f"n-{tag}.notifier"}


def config(names: dict, tmp_path: Path, targets: dict, **changes) -> NotifierConfig:
    return NotifierConfig(
        targets=targets,
        group=names["group"],
        alerts_topic=names["alerts"],
        frames_topic=names["frames"],
        database=f"sqlite:///{tmp_path / 'alerts.db'}",
        dashboard_url="http://nvr:8080",
        stats_interval=1.0,
        **changes,
    )


def send_alerts(bootstrap: str, topic: str, alerts: list) -> None:
    producer = kafka_clients.producer("notify-test", bootstrap)
    for alert in alerts:
        kafka_clients.send(producer, topic, pack_alert(alert), alert.camera_id.encode())
    assert producer.flush(30) == 0


def flood(count: int, cameras: int, start_ns: int) -> list:
    """``count`` new stranger alerts over 10 s of capture time, on ``cameras`` cameras in turn."""
    return [
        dataclasses.replace(
            OPENED,
            alert_id=f"flood-{i:03d}",
            camera_id=f"cam-{i % cameras}",
            started_ts_ns=start_ns + i * S // 10,
            updated_ts_ns=start_ns + i * S // 10,
        )
        for i in range(count)
    ]


def test_a_flood_reaches_each_target_as_its_rules_say(
    names: dict, bootstrap: str, sample_dir: Path, tmp_path: Path
) -> None:
    hooks = {name: Webhook().start() for name in ("calm", "all", "capped")}
    mqtt, mailbox = Mosquitto(), Mailbox()
    start = time.time_ns() - 60 * S
    alerts = flood(100, 5, start)
    frame = Frame("cam-0", 7, start, 1280, 2082, (sample_dir / "biden.jpg").read_bytes())
    alerts[0] = dataclasses.replace(alerts[0], evidence=(Sighting("e7", 7, start, (574.0, 225.0, 820.0, 546.0), 0.1),))
    producer = kafka_clients.producer("notify-test", bootstrap)
    kafka_clients.send(producer, names["frames"], pack_frame(frame), b"cam-0")
    assert producer.flush(30) == 0
    send_alerts(bootstrap, names["alerts"], alerts)
    targets = {
        "calm": {"url": hooks["calm"].url},  # the defaults: new only, a minute per camera and kind, 30 an hour
        "all": {"url": hooks["all"].url, "cooldown_s": 0, "max_per_hour": 1000},
        "capped": {"url": hooks["capped"].url, "cooldown_s": 0, "max_per_hour": 10},
        "home": {"url": mqtt.url("facestream/alerts")},
        "mail": {"url": mailbox.url("ops@facestream.test"), "cameras": "cam-0"},
    }
    try:
        done = subprocess.run(
            notifier_command(config(names, tmp_path, targets, stop_after_idle=5.0)),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        time.sleep(1.0)  # the last MQTT messages reach the subscriber
        counts = {name: len(hook.posts) for name, hook in hooks.items()}
        assert counts == {"calm": 5, "all": 100, "capped": 10}, done.stderr[-5000:]
        assert len([m for m in mqtt.messages if m[0] == "facestream/alerts"]) == 5
        (mail,) = mailbox.messages
    finally:
        for receiver in (*hooks.values(), mqtt, mailbox):
            receiver.stop()
    first = hooks["calm"].posts[0]
    assert first["title"] == "Stranger at cam-0" and "http://nvr:8080/history?alert=flood-000" in first["message"]
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
    settings = config(names, tmp_path, targets, retry_max_s=1.0)
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
    finally:
        notifier.send_signal(signal.SIGTERM)
        notifier.wait(timeout=60)
        hook.stop()
    said = log.read_text()
    assert "target ops (json://***)" in said and "trying again" in said  # failures said by name, URL masked
    ids = [post["message"].rsplit("alert=", 1)[1] for post in hook.posts]
    assert len(ids) == 30 == len(set(ids))
