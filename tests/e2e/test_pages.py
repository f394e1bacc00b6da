"""Every page of the dashboard as a person sees it, on a phone and at a desk, in Chromium: no sideways
scrolling, no text squeezed a word to a line, nothing over the header, controls a finger can press
(helpers/layout.js), on a store with a dozen recurring strangers and an alert with a long life, and a
live feed of three cameras."""

import contextlib
import dataclasses
import time
from collections.abc import Iterator
from pathlib import Path

from confluent_kafka import Consumer
from helpers.accounts import DASHBOARD_ADMIN, sign_in_page
from helpers.alert import SFACE, person
from helpers.browser import DESK, PAGES, at_size, chromium, console_errors, count, look_at, wait_until
from helpers.dashboard import dashboard_at

from facestream import kafka_clients
from facestream.alertdb import open_database
from facestream.alertdb.writer import AlertWriter, Received
from facestream.schemas import (
    Alert,
    DetectionEvent,
    Face,
    Frame,
    ModelRef,
    Sighting,
    pack_alert,
    pack_detection,
    pack_frame,
)

S = 1_000_000_000
BOX = (574.0, 225.0, 820.0, 546.0)  # Biden's face in the sample photo biden.jpg (1280 x 2082)
CAMERAS = ("gate", "front-door", "car-park-north", "lobby")
STRANGERS = 12
UPDATES = 20
FACES_SHOWN = """return [...document.querySelectorAll('#strangers img')]
  .filter((i) => i.complete && i.naturalWidth > 0 && i.naturalWidth < 300).length"""  # the photo is 1280 wide


def stored(database: str, sample_dir: Path, now: int) -> None:
    """The store as a week of a site leaves it: STRANGERS strangers (two of them back on another
    camera), each visit with its snapshot, and an alert that went on for UPDATES records."""
    writer = AlertWriter(open_database(database), "store")
    photo = (sample_dir / "biden.jpg").read_bytes()
    records: list[Alert] = []
    for i in range(STRANGERS):
        for visit, camera in enumerate(CAMERAS[i % 4 : i % 4 + (2 if i < 2 else 1)]):
            seen = now - (STRANGERS - i) * 3600 * S + visit * 600 * S
            records.append(
                Alert(
                    f"stranger-{i}-{visit}",
                    "stranger",
                    "new",
                    camera,
                    seen,
                    seen + 20 * S,
                    (Sighting(f"e{i}-{visit}", i, seen, BOX, 0.12, 0.93),),
                    4,
                    face=person(100 + i).astype("<f2").tobytes(),
                    embedder=SFACE,
                )
            )
    opened = Alert("crowd-1", "crowd", "new", "lobby", now - 900 * S, now - 900 * S, (), 6, zone="hall")
    life = [
        dataclasses.replace(opened, state="update", updated_ts_ns=opened.started_ts_ns + k * S) for k in range(1, 21)
    ]
    ended = dataclasses.replace(opened, state="end", updated_ts_ns=now - 800 * S, ended_ts_ns=now - 800 * S)
    records += [opened, *life, ended]
    writer.write([Received("alerts", 0, offset, pack_alert(a), a) for offset, a in enumerate(records)])
    for alert in records:
        if alert.evidence:
            writer.keep_snapshot(alert.alert_id, "kept", photo, alert.evidence[0].box)


def live(bootstrap: str, names: dict, sample_dir: Path) -> None:
    """A frame with its face on each of three cameras, and an alert that has been updated 15 times."""
    producer = kafka_clients.producer("pages-test", bootstrap)
    photo, model, now = (sample_dir / "biden.jpg").read_bytes(), ModelRef("yunet", "2023mar", "0" * 64), time.time_ns()
    for seq, camera in enumerate(CAMERAS[:3]):
        kafka_clients.send(
            producer, names["frames"], pack_frame(Frame(camera, seq, now, 1280, 2082, photo)), key=camera.encode()
        )
    producer.flush(10)
    for seq, camera in enumerate(CAMERAS[:3]):
        event = DetectionEvent(f"e{seq}", camera, seq, now, now + S // 5, model, 1280, 2082, (Face(BOX, 0.94),))
        kafka_clients.send(producer, names["detections"], pack_detection(event), key=camera.encode())
    alert = Alert("live-1", "stranger", "new", "gate", now, now, (Sighting("e0", 0, now, BOX, 0.11),), 1)
    for k in range(16):
        record = alert if k == 0 else dataclasses.replace(alert, state="update", updated_ts_ns=now + k, count=k + 1)
        kafka_clients.send(producer, names["alerts"], pack_alert(record), key=b"gate")
    producer.flush(10)


def test_every_page_reads_on_a_phone_and_at_a_desk(bootstrap: str, sample_dir: Path, tmp_path: Path) -> None:
    with dashboard_at(bootstrap, tmp_path, search=True) as (names, port, _log, database, _auth):
        pages_of(bootstrap, names, port, database, sample_dir, tmp_path)


@contextlib.contextmanager
def a_member_as_the_services_name_theirs(bootstrap: str, names: dict) -> Iterator[None]:
    """A group member with a client id as long as a service's ("<group>.alerting-worker"), held in
    its group while the pages are looked at: the live page lists it beside the groups' names."""
    member = Consumer(
        kafka_clients.client_config(
            bootstrap, **{"group.id": f"{names['frames']}.alerting", "client.id": f"{names['frames']}.alerting-worker"}
        )
    )
    member.subscribe([names["frames"]])
    deadline = time.monotonic() + 30
    while not member.assignment():
        assert time.monotonic() < deadline, "the member got no partition"
        member.poll(0.5)
    try:
        yield
    finally:
        member.close()


def pages_of(bootstrap: str, names: dict, port: int, database: str, sample_dir: Path, tmp_path: Path) -> None:
    stored(database, sample_dir, time.time_ns())
    live(bootstrap, names, sample_dir)
    base = f"http://127.0.0.1:{port}/"
    with chromium() as page, a_member_as_the_services_name_theirs(bootstrap, names):
        problems = {"login": look_at(page, base + "login", "login", tmp_path)}
        sign_in_page(page, port, DASHBOARD_ADMIN)
        wait_until("the live feed's alert", lambda: count(page, ".alert[data-kind=stranger]") == 1, 30)
        for name, path in PAGES.items():
            problems[name] = look_at(page, base + path, name, tmp_path)
        assert problems == {name: {"phone": [], "desk": []} for name in ("login", *PAGES)}, problems

        at_size(page, DESK)  # the goal: ten strangers in one screen at a desk, each row with its face
        page.get(base + "strangers")
        wait_until("every stranger", lambda: count(page, "#strangers tr.stranger") == STRANGERS, 30)
        in_view = page.execute_script(
            "return [...document.querySelectorAll('#strangers tr.stranger')]"
            ".filter((r) => r.getBoundingClientRect().bottom <= window.innerHeight).length"
        )
        assert in_view >= 10, f"{in_view} strangers in one screen"
        cameras = [td.text for td in page.find_elements("css selector", "#strangers td.route")]
        assert sum(" → " in text for text in cameras) == 2, cameras  # the two who came back, on a second camera
        wait_until("their faces, cut from the snapshots", lambda: page.execute_script(FACES_SHOWN) >= 10, 30)

        page.get(base + "history")  # a long life in short, the whole of it a click away
        summary = ".alert[data-alert-id=crowd-1] details.lifecycle summary"
        wait_until("the crowd alert", lambda: count(page, summary) == 1, 30)
        assert page.find_element("css selector", summary).text == f"new → update ×{UPDATES} → end"
        page.find_element("css selector", summary).click()
        whole = page.find_element("css selector", ".alert[data-alert-id=crowd-1] .whole").text
        assert whole.count("→") == UPDATES + 1 and whole.startswith("new ")
        page.get(base)
        wait_until(
            "the live feed's life in short",
            # find_elements: the feed is still being drawn after page.get, and find_element would raise
            lambda: any("update ×15" in e.text for e in page.find_elements("css selector", ".alert .lifecycle")),
            30,
        )
        assert console_errors(page) == []
