"""Real receivers of notifications on this machine (see ``pythonpath`` in pyproject): an HTTP server
taking Apprise's JSON posts (a webhook), Mosquitto from Debian's packages (MQTT) with a subscriber, and
aiosmtpd's SMTP server (e-mail)."""

import json
import shutil
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from helpers.http import free_port


class Webhook:
    """Collects the JSON bodies posted to it; ``start`` may come late (a target that is down first)."""

    def __init__(self) -> None:
        self.port, self.posts, self.server = free_port(), [], None

    @property
    def url(self) -> str:
        return f"json://127.0.0.1:{self.port}/hook"

    def start(self) -> "Webhook":
        posts = self.posts

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # http.server names it
                posts.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *_args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()


def _subscribed(port: int, keep, timeout_s: float):
    """A paho client connected to the broker on ``port`` and subscribed to every topic, handing each
    message to ``keep``; nothing runs its network loop yet."""
    import paho.mqtt.client as mqtt

    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2)
    client.on_message = lambda _c, _u, msg: keep(msg)
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            client.connect("127.0.0.1", port)
            break
        except OSError:
            assert time.monotonic() < deadline, f"no MQTT broker on port {port}"
            time.sleep(0.1)
    client.subscribe("#", qos=1)
    return client


def mqtt_subscriber(port: int, keep, timeout_s: float = 10):
    """A paho client subscribed to every topic of the broker on ``port``, handing each message to
    ``keep`` from a network thread of its own."""
    client = _subscribed(port, keep, timeout_s)
    client.loop_start()
    return client


def retained(port: int, settle_s: float = 1.0) -> dict[str, bytes]:
    """What a subscriber connecting now is given at once: every retained topic's last payload. The
    network loop runs here, not on paho's thread: its loop_stop() can race that thread's own exit and
    fail (AttributeError on a thread already gone, seen on a loaded machine)."""
    found: dict[str, bytes] = {}
    client = _subscribed(port, lambda msg: found.setdefault(msg.topic, msg.payload) if msg.retain else None, 10)
    deadline = time.monotonic() + settle_s
    while time.monotonic() < deadline:
        client.loop(timeout=0.1)
    client.disconnect()
    return found


class Mosquitto:
    """A Mosquitto broker on a free port and a subscriber collecting (topic, payload bytes) of everything."""

    def __init__(self) -> None:
        assert shutil.which("mosquitto"), "Mosquitto is needed: apt-get install mosquitto (.ci/run does)"
        self.port, self.messages = free_port(), []
        self.process = subprocess.Popen(
            ["mosquitto", "-p", str(self.port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        self.client = mqtt_subscriber(self.port, lambda msg: self.messages.append((msg.topic, msg.payload)))

    def payloads(self, topic: str) -> list[bytes]:
        return [payload for t, payload in self.messages if t == topic]

    def retained(self) -> dict[str, bytes]:
        return retained(self.port)

    def url(self, topic: str) -> str:
        return f"mqtt://127.0.0.1:{self.port}/{topic}"

    def stop(self) -> None:
        self.client.loop_stop()
        self.process.terminate()
        self.process.wait(timeout=10)


class Mailbox:
    """aiosmtpd's SMTP server on a free port, keeping the messages it takes."""

    def __init__(self) -> None:
        from aiosmtpd.controller import Controller

        self.port, self.messages = free_port(), []
        mailbox = self

        class Handler:
            async def handle_DATA(self, _server, _session, envelope) -> str:  # aiosmtpd names it
                mailbox.messages.append(envelope.content)
                return "250 OK"

        self.controller = Controller(Handler(), hostname="127.0.0.1", port=self.port)
        self.controller.start()

    def url(self, to: str) -> str:
        return f"mailto://127.0.0.1:{self.port}?to={to}&from=cameras@facestream.test&mode=insecure"

    def stop(self) -> None:
        self.controller.stop()
