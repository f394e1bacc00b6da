"""A state target: what is open, per camera and kind, as retained MQTT topics that Home Assistant and
Node-RED read the way Frigate's users read ``frigate/<camera>/<object>`` (paho-mqtt; Apprise's MQTT
sends one fixed topic, without retain).

Under ``PREFIX`` (the url's path, ``facestream`` if none), for every record:

- ``PREFIX/CAMERA/KIND``: how many alerts of that kind are open on the camera (retained);
- ``PREFIX/CAMERA/KIND/alert``: the record as JSON, with ``open`` and the dashboard ``url`` (retained);
- ``PREFIX/CAMERA/KIND/snapshot``: the evidence JPEG of the latest ``new`` alert (retained);
- ``PREFIX/events``: the record as JSON, ``{"type": STATE, "alert": {...}}`` (not retained);
- ``PREFIX/available``: ``online``, and ``offline`` when the notifier stops or dies (its will).

With a discovery prefix, Home Assistant also gets a binary sensor per camera and kind (on while one is
open) and, for kinds with pictures, an MQTT camera showing the snapshot.
"""

import json
import re
import threading
import time
import uuid
from collections.abc import Callable
from urllib.parse import unquote, urlsplit

from facestream.alertdb.outbox import Owed
from facestream.notifier import message
from facestream.notifier.rules import TargetSettings
from facestream.schemas import Alert
from facestream.schemas.kinds import kind_of

ACK_S = 10.0  # how long the broker has to acknowledge a record's messages


def topic_part(text: str) -> str:
    """A camera id as one MQTT topic level: no separators, no wildcards."""
    return re.sub(r"[/+#]", "_", text)


def object_id(*parts: str) -> str:
    """Home Assistant's ids take letters, digits, _ and - only."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", "_".join(parts))


class MqttStateTarget:
    def __init__(self, name: str, settings: TargetSettings, dashboard_url: str) -> None:
        import paho.mqtt.client as mqtt

        url = urlsplit(settings.url)
        self.prefix = url.path.strip("/") or "facestream"
        host, port = url.hostname or "localhost", url.port or (8883 if url.scheme == "mqtts" else 1883)
        self.address = f"{host}:{port}"
        self.discovery, self.dashboard_url = settings.discovery_prefix.strip("/"), dashboard_url
        self.available = f"{self.prefix}/available"
        self._announced: set[str] = set()  # the camera/kind pairs Home Assistant was told of since connecting
        self._lock = threading.Lock()
        self.client = mqtt.Client(
            mqtt.CallbackAPIVersion.VERSION2, client_id=f"facestream-{name}-{uuid.uuid4().hex[:8]}"
        )
        if url.username:
            self.client.username_pw_set(unquote(url.username), unquote(url.password) if url.password else None)
        if url.scheme == "mqtts":
            self.client.tls_set()
        self.client.will_set(self.available, "offline", qos=1, retain=True)
        self.client.on_connect = self._connected
        self.client.reconnect_delay_set(1, 30)
        self.client.connect_async(host, port)
        self.client.loop_start()

    def _connected(self, client, _userdata, _flags, reason, _properties) -> None:
        if not reason.is_failure:
            client.publish(self.available, "online", qos=1, retain=True)
            with self._lock:
                self._announced.clear()  # a broker without persistence forgot them: announced again

    def send(self, item: Owed, picture: Callable[[], bytes | None]) -> str | None:
        """None once the broker acknowledged every message of the record, else what went wrong."""
        if not self.client.is_connected():
            return f"not connected to the MQTT broker at {self.address}"
        alert = item.alert
        base = base_topic(self.prefix, alert)
        record = {
            **mqtt_fields(alert),
            "open": int(item.note.get("open", 0)),
            "url": message.link(alert, self.dashboard_url),
        }
        with self._lock:
            announce = bool(self.discovery) and base not in self._announced
        found = discovery(alert, self.prefix, self.discovery, self.available) if announce else []
        jpeg = picture() if alert.state == "new" and kind_of(alert.kind).pictured else None
        messages = found + record_messages(alert, self.prefix, record, jpeg)
        deadline = time.monotonic() + ACK_S
        try:
            sent = [self.client.publish(topic, payload, qos=1, retain=retain) for topic, payload, retain in messages]
            for info in sent:
                info.wait_for_publish(max(0.01, deadline - time.monotonic()))
        except (RuntimeError, ValueError) as exc:  # disconnected between the check and the publish
            return f"the MQTT broker at {self.address}: {exc}"
        if not all(info.is_published() for info in sent):
            return f"the MQTT broker at {self.address} did not acknowledge within {ACK_S:.0f} s"
        if announce:
            with self._lock:
                self._announced.add(base)
        return None

    def close(self) -> None:
        """Marked offline, then disconnected (a notifier that dies is marked offline by the broker: its will)."""
        if self.client.is_connected():
            self.client.publish(self.available, "offline", qos=1, retain=True).wait_for_publish(3)
        self.client.disconnect()
        self.client.loop_stop()


Message = tuple[str, bytes | str, bool]  # (topic, payload, retained)


def mqtt_fields(alert: Alert) -> dict:
    """The alert's fields as JSON can carry them, less a stranger's face embedding: biometric data
    (and bytes), it stays in Kafka and the alert store."""
    return {k: v for k, v in alert.fields().items() if k not in ("face", "embedder")}


def base_topic(prefix: str, alert: Alert) -> str:
    """``PREFIX/CAMERA/KIND``: the topic of an alert's camera and kind."""
    return f"{prefix}/{topic_part(alert.camera_id)}/{alert.kind}"


def record_messages(alert: Alert, prefix: str, record: dict, jpeg: bytes | None) -> list[Message]:
    """The messages of one alert record: the open count and the record (retained), the snapshot of a
    ``new`` alert with a picture (retained), and the event (not retained), in that order."""
    base = base_topic(prefix, alert)
    messages: list[Message] = [(base, str(record["open"]), True), (f"{base}/alert", json.dumps(record), True)]
    if jpeg:
        messages.append((f"{base}/snapshot", jpeg, True))
    messages.append((f"{prefix}/events", json.dumps({"type": alert.state, "alert": record}), False))
    return messages


def discovery(alert: Alert, prefix: str, discovery_prefix: str, available: str) -> list[Message]:
    """Home Assistant's discovery messages for one camera and kind (retained, so it finds them later)."""
    base = base_topic(prefix, alert)
    camera_id = object_id("facestream", prefix, alert.camera_id)
    device = {"identifiers": [camera_id], "name": f"{alert.camera_id} (facestream)", "manufacturer": "facestream"}
    kind = kind_of(alert.kind)
    sensor = {
        "name": kind.title,
        "unique_id": object_id(camera_id, alert.kind),
        "state_topic": base,
        "value_template": "{{ 'ON' if value | int > 0 else 'OFF' }}",
        "json_attributes_topic": f"{base}/alert",
        "availability_topic": available,
        "device_class": kind.device_class,
        "device": device,
    }
    found: list[Message] = [
        (f"{discovery_prefix}/binary_sensor/{object_id(camera_id, alert.kind)}/config", json.dumps(sensor), True)
    ]
    if kind.pictured:
        camera = {
            "name": f"{kind.title} snapshot",
            "unique_id": object_id(camera_id, alert.kind, "snapshot"),
            "topic": f"{base}/snapshot",
            "availability_topic": available,
            "device": device,
        }
        topic = f"{discovery_prefix}/camera/{object_id(camera_id, alert.kind, 'snapshot')}/config"
        found.append((topic, json.dumps(camera), True))
    return found
