"""``facestream demo``: the whole path, live, on one machine.

Starts the local Kafka broker, fetches the models and the sample photos, enrols one person of the
photos in the gallery and puts him on the watchlist, runs a detector (with face embeddings), the pose
service, an alerting worker and producers streaming the photos as three cameras, and prints every
detection event and every alert as it arrives: on the portraits camera Obama is known and watched
(person_seen alerts name him) and Biden appears as a stranger; the annotated camera, with two faces in
most of its photos, runs the crowd rule in a zone (drawn on its tile); the corridor camera shows a
basketball player toppling and lying on the floor (``samples.fall_footage``), for the pose service
and the fall rule only. The dashboard shows it all live in a browser. With usearch installed
(``facestream[search]``) the alert store keeps every embedded face and, a little after the first
stranger alert, the demo asks the dashboard where else that stranger was and prints the visits (the
page's "Where else?" link on the alert shows the same). The services are the same commands a
deployment runs, in child processes; their logs go to files so the terminal shows events and alerts.
"""

import importlib.util
import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import click

from facestream import kafka_clients, kafka_reading, kafka_topics, paths
from facestream.schemas import Alert
from facestream.signals import StopOnSignals

# The annotated photos hold 2, 2 and 1 faces, all in their upper 70%: a crowd of two in the zone "room".
ROOM = [[0.02, 0.02], [0.98, 0.02], [0.98, 0.7], [0.02, 0.7]]
CAMERAS: dict[str, dict[str, Any]] = {
    "annotated": {
        "rules": "crowd",
        "crowd": {"min_faces": 2},
        "zones": {"room": ROOM},
        "rule_zones": {"crowd": ["room"]},
    },
    "portraits": {"rules": "stranger,person_seen"},
    "corridor": {"rules": "fall"},
}
FALL_FPS = 3.0  # the corridor's own rate: its player topples within a second
LIVE_S = 5.0  # the demo's services skip frames older than this: it shows the present
# The corridor streams to a topic of its own that only the pose service reads: on a small machine one
# detector with embeddings and the pose service cannot both take every camera's frames.
CORRIDOR_TOPIC = "frames.corridor"
KNOWN = ("Barack Obama", "obama.jpg")
DEMO_USER = "demo"  # the demo's admin account, its password renewed and printed each run
SEARCH_AFTER_S = 5.0  # after the first stranger alert: its face's sightings are kept by then


@click.command(
    epilog="\b\nExamples:\n  facestream demo\n  facestream demo --duration 0 --fps 5   # until Ctrl-C\n"
    "  facestream demo --dashboard-port 9000                 # the live page on http://127.0.0.1:9000\n"
    "  facestream demo --notify ntfy://ntfy.sh/my-demo        # its alerts on your phone (the ntfy app)",
    context_settings={"show_default": True},
)
@click.option("--duration", type=click.FloatRange(min=0), default=30.0, help="Seconds to stream (0: until Ctrl-C).")
@click.option("--fps", type=click.FloatRange(min=0.1), default=2.0, help="Frames per second per camera.")
@click.option("--batch", type=click.IntRange(min=1), default=4)
@click.option(
    "--dashboard-port", type=click.IntRange(min=0, max=65535), default=8080, help="The live page's port (0: none)."
)
@click.option(
    "--notify",
    "notify_url",
    default="",
    help="An Apprise URL (ntfy://, mailto://, json://, ...) the demo's alerts are sent to, with its default rules.",
)
@click.option(
    "--search/--no-search",
    default=True,
    help="Keep every face and show where else the first stranger was (needs facestream[search] and the dashboard).",
)
def demo(duration: float, fps: float, batch: int, dashboard_port: int, notify_url: str, search: bool) -> None:
    """Stream real photos as three cameras through Kafka; print detections and alerts live."""
    from facestream import samples
    from facestream.alert_store.config import AlertStoreConfig, alert_store_command
    from facestream.alerting.config import AlertingConfig, alerting_command
    from facestream.dashboard.config import DashboardConfig, dashboard_command
    from facestream.detector_service.config import DetectorConfig, PoseConfig, detector_command, pose_command
    from facestream.notifier.config import NotifierConfig, notifier_command
    from facestream.producers.config import producer_command
    from facestream.schemas import FRAMES_TOPIC, GALLERY_TOPIC
    from facestream.tools.gallery import enrol

    _ensure_broker()
    click.echo("fetching the models and the sample photos (first time only) ...", err=True)
    cameras = {"portraits": samples.portraits_dir(), "annotated": samples.annotated_dir()}
    # Live: frames older than LIVE_S are skipped (counted), so a detector that starts behind, or
    # cannot keep up on a small machine, shows the present rather than working through the past.
    detector = DetectorConfig(
        group="facestream-demo", batch=batch, max_wait_ms=100.0, embedder="sface", max_frame_age_s=LIVE_S
    )
    name, photo = KNOWN
    enrol(name, [samples.fetch() / photo], GALLERY_TOPIC, detector, watch=True)
    click.echo(f"enrolled {name} from {photo}, watched: the other people in the photos are strangers", err=True)
    log_dir = paths.home() / "demo"
    log_dir.mkdir(parents=True, exist_ok=True)
    corridor = samples.fall_footage(log_dir / "corridor", FALL_FPS)
    pose = PoseConfig(
        group="facestream-demo-pose", frames_topic=CORRIDOR_TOPIC, max_wait_ms=100.0, max_frame_age_s=LIVE_S
    )
    search = search and bool(dashboard_port) and _search_installed()
    token = ""  # the demo account's API token, for its own search
    started_ns = time.time_ns()
    commands = {
        "detector": detector_command(detector),
        "pose": pose_command(pose),
        "alerting": alerting_command(AlertingConfig(group="facestream-demo-alerting", cameras=CAMERAS)),
        "alert-store": alert_store_command(
            AlertStoreConfig(frames_topic=f"{FRAMES_TOPIC},{CORRIDOR_TOPIC}", sightings=search)
        ),
        "producer": producer_command(list(cameras.items()), fps=fps, loop=True),
        "corridor": producer_command([("corridor", corridor)], fps=FALL_FPS, loop=True, frames_topic=CORRIDOR_TOPIC),
    }
    if notify_url:
        target = {"demo": {"url": notify_url}}
        dashboard = f"http://127.0.0.1:{dashboard_port}" if dashboard_port else ""
        commands["notify"] = notifier_command(
            NotifierConfig(targets=target, group="facestream-demo-notifier", dashboard_url=dashboard)
        )
    if dashboard_port:
        zones = {camera: own["zones"] for camera, own in CAMERAS.items() if "zones" in own}
        page = DashboardConfig(
            http_port=dashboard_port,
            frames_topic=f"{FRAMES_TOPIC},{CORRIDOR_TOPIC}",
            zones=zones,
            search=search,
        )
        commands["dashboard"] = dashboard_command(page)
        password, token = _demo_account()
        click.echo(
            f"dashboard: http://127.0.0.1:{dashboard_port}/ (open it in a browser and sign in as {DEMO_USER} with "
            f"the password {password}; the alerts kept: /history"
            + (", search by face: /search" if search else "")
            + "; more accounts: facestream users add NAME --role viewer|reviewer|identity|admin)",
            err=True,
        )
    children = {name: _spawn(log_dir / f"{name}.log", command) for name, command in commands.items()}
    click.echo(
        f"streaming {len(cameras)} cameras at {fps:g} fps and a corridor at {FALL_FPS:g}; logs in {log_dir}; "
        "Ctrl-C stops",
        err=True,
    )
    counts: dict[str, int] = {}
    where_else = _WhereElse(f"http://127.0.0.1:{dashboard_port}", token) if search else None
    # Ctrl-C (or SIGTERM) ends the stream through StopOnSignals, not KeyboardInterrupt: a shell that
    # starts the demo in the background ignores SIGINT for it, and Python then raises none.
    with StopOnSignals("stopping the services") as stop:
        try:
            for line, kind, alert in _since(started_ns, duration, children, log_dir, stop):
                click.echo(line)
                counts[kind] = counts.get(kind, 0) + 1
                if where_else is not None:
                    for said in where_else.step(alert):
                        click.echo(said)
            if where_else is not None:  # the stream ended before the search was due: ask now
                for said in where_else.step(None, now=True):
                    click.echo(said)
        finally:
            _stop(children)
    click.echo(", ".join(f"{n} {kind}" for kind, n in sorted(counts.items())) or "nothing arrived", err=True)
    if not any(kind.startswith("events") for kind in counts):
        raise click.ClickException(f"no detection events arrived; see the logs in {log_dir}")
    click.echo("Kafka keeps running; `facestream kafka stop` stops it.", err=True)


def _search_installed() -> bool:
    if importlib.util.find_spec("usearch") is None:
        click.echo("search by face is off: it needs usearch (pip install 'facestream[search]')", err=True)
        return False
    return True


def _demo_account() -> tuple[str, str]:
    """The demo's admin account (made, or its password renewed, each run: printed once) and an API
    token of it for the demo's own search."""
    from facestream.alertdb import accounts, default_url, open_database

    engine = open_database(default_url())
    password = accounts.new_password()
    if accounts.named(engine, DEMO_USER) is None:
        accounts.add(engine, DEMO_USER, "admin", password)
    else:
        accounts.change(engine, DEMO_USER, password=password, role="admin", disabled=False)
    return password, accounts.new_token(engine, DEMO_USER)


class _WhereElse:
    """Asks the dashboard, a little after the first stranger alert, where else that face was: what a
    guard asks first. Tries again a few times while the store catches up."""

    TRIES = 4

    def __init__(self, url: str, token: str) -> None:
        from facestream.tools.search import Api

        self.api, self.url = Api(url, token), url
        self.alert_id = ""
        self.due = 0.0
        self.tries = 0

    def step(self, alert: Alert | None, now: bool = False) -> list[str]:
        """Lines to print now: none until the search is due (``now``: due), then its visits (or why it
        failed)."""
        if not self.alert_id and alert is not None and alert.kind == "stranger":
            self.alert_id, self.due = alert.alert_id, time.monotonic() + SEARCH_AFTER_S
        if not self.alert_id or self.tries >= self.TRIES or (time.monotonic() < self.due and not now):
            return []
        from facestream.errors import ConfigError
        from facestream.tools.search import visit_lines

        self.tries += 1
        asked = f"SEARCH where else was the stranger of alert {self.alert_id[:8]}?"
        try:
            answer = json.loads(self.api.call("POST", "/api/search", {"alert": self.alert_id, "since": "1h"}))
        except ConfigError as exc:
            self.due = time.monotonic() + SEARCH_AFTER_S
            return [f"{asked} not yet: {exc}"]
        self.tries = self.TRIES
        return [
            f"{asked} {visit_lines(answer)}",
            f"  on the page: {self.url}/search?alert={self.alert_id}",
        ]


def _ensure_broker() -> None:
    """Start the local broker (unless KAFKA_BOOTSTRAP names one) and create the demo's topics."""
    from facestream.schemas import (
        ALERTS_TOPIC,
        CAMERA_STATUS_TOPIC,
        DEAD_LETTER_TOPIC,
        DETECTIONS_TOPIC,
        FRAMES_TOPIC,
        POSES_TOPIC,
    )

    if kafka_clients.external_bootstrap():
        kafka_clients.check_reachable()
    else:
        from facestream.broker import LocalBroker

        LocalBroker().start()
    partitions = kafka_topics.pipeline_partitions()
    kafka_topics.ensure_topics(
        {
            **dict.fromkeys(
                (FRAMES_TOPIC, DETECTIONS_TOPIC, POSES_TOPIC, ALERTS_TOPIC, CAMERA_STATUS_TOPIC), partitions
            ),
            CORRIDOR_TOPIC: 1,
            DEAD_LETTER_TOPIC: 1,
        }
    )


def _spawn(log_path: Path, cmd: list[str]) -> subprocess.Popen:
    log = open(log_path, "wb")
    return subprocess.Popen(
        cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, preexec_fn=_die_with_parent
    )


def _die_with_parent() -> None:
    """In the child, on Linux: SIGTERM when the demo dies, however it dies (even SIGKILL), so that no
    service outlives it and keeps streaming into the next run."""
    if sys.platform.startswith("linux"):
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)


def _since(started_ns: int, duration: float, children: dict[str, subprocess.Popen], log_dir: Path, stop: StopOnSignals):
    """(line to print, what it counts as, the alert or None) for each detection event and alert made after
    ``started_ns``, until ``duration`` passes, a stop is asked for, or a child dies (then the end of
    its log says why)."""
    from facestream.schemas import ALERTS_TOPIC, DETECTIONS_TOPIC, unpack_alert, unpack_detection
    from facestream.tools.alerts import describe as describe_alert
    from facestream.tools.events import describe as describe_event

    end = time.monotonic() + duration if duration else None

    def done() -> bool:
        for name, child in children.items():
            if child.poll() is not None:
                log = log_dir / f"{name}.log"
                tail = "\n".join(log.read_text(errors="replace").splitlines()[-5:])
                raise click.ClickException(f"the {name} exited with code {child.returncode}; the end of {log}:\n{tail}")
        return stop.requested or (end is not None and time.monotonic() >= end)

    for msg in kafka_reading.records([DETECTIONS_TOPIC, ALERTS_TOPIC], done):
        if msg.topic() == ALERTS_TOPIC:
            alert = unpack_alert(msg.value())
            if alert.updated_ts_ns >= started_ns:
                yield f"ALERT {describe_alert(alert)}", f"alerts ({alert.kind} {alert.state})", alert
            continue
        event = unpack_detection(msg.value())
        if event.detect_ts_ns >= started_ns:
            yield describe_event(event), f"events ({event.camera_id})", None


def _stop(children: dict[str, subprocess.Popen], grace_s: float = 30.0) -> None:
    """SIGTERM to every child at once, then one shared grace period: stopping them one after another
    let slow stops add up past what a user (or a test) waits for Ctrl-C. A child still running
    afterwards is killed, and the demo says which."""
    for proc in children.values():
        if proc.poll() is None:
            proc.terminate()
    deadline = time.monotonic() + grace_s
    for name, proc in children.items():
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            click.echo(f"the {name} did not stop within {grace_s:g} s of SIGTERM; killed it", err=True)
            proc.kill()
            proc.wait()
