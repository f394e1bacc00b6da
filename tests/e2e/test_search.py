"""Search by face as a deployment runs it: detection events with real SFace embeddings of the sample
photos, kept by ``alert-store --sightings``, searched through the dashboard's API (``--search``), its
page in Chromium and the command line, by photo, by an alert's face and by an enrolled person; every
search in the audit log; a person erased on request is gone from the database, index and gallery."""

import csv
import io
import json
import subprocess
import time
from pathlib import Path

import cv2
import numpy as np
import pytest
from click.testing import CliRunner
from helpers.accounts import Client, api_token, make_users, sign_in_page
from helpers.alert import DETECTOR
from helpers.browser import chromium, console_errors, count, images_loaded
from helpers.http import free_port, get
from helpers.producer import wait_until
from helpers.worker import dashboard_on, enrol, pipeline_names, store_on
from sqlalchemy import func, select

from facestream import gallery, kafka_clients, kafka_topics
from facestream.alert_store.config import alert_store_command
from facestream.alertdb import open_database
from facestream.alertdb.schema import sightings
from facestream.dashboard.config import dashboard_command
from facestream.detector_service.config import DetectorConfig
from facestream.schemas import (
    Alert,
    DetectionEvent,
    Face,
    Frame,
    Sighting,
    alert_id_for,
    event_id_for,
    pack_alert,
    pack_detection,
    pack_frame,
)
from facestream.tools.cli import cli
from facestream.tools.gallery import photo_faces

AUDITOR = "auditor"  # an admin: search, erasure and the audit log
S = 1_000_000_000
# (camera, photo, frames, seconds ago): Obama twice, at the door then in the hall; Biden at the gate
SCENES = [("door", "obama2.jpg", 3, 3000), ("hall", "obama2.jpg", 2, 600), ("gate", "biden.jpg", 3, 300)]


@pytest.fixture
def names(bootstrap: str) -> dict[str, str]:
    names = pipeline_names("q", bootstrap)
    kafka_topics.ensure_topics({names["alerts"]: 1}, bootstrap)
    return names


def camera_history(names: dict, sample_dir: Path) -> Alert:
    """Frames and detection events of SCENES in Kafka, stamped with their capture times as producers and
    detectors stamp them (the evidence is looked up by time), and a stranger alert on Biden's first frame."""
    photos = {photo: (sample_dir / photo).read_bytes() for _, photo, _, _ in SCENES}
    sizes = {photo: cv2.imread(str(sample_dir / photo)).shape[:2] for photo in photos}
    embeddings, embedder = photo_faces(list(photos.items()), DetectorConfig(provider="cpu"))
    embedding_of = dict(zip(photos, embeddings))
    producer, now, seq = kafka_clients.producer("search-test"), time.time_ns(), 0
    alert = None
    for camera, photo, frames, ago_s in SCENES:
        for i in range(frames):
            seq, t = seq + 1, now - ago_s * S + i * S
            frame = Frame(camera, seq, t, sizes[photo][1], sizes[photo][0], photos[photo])
            producer.produce(names["frames"], pack_frame(frame), camera.encode(), timestamp=t // 1_000_000)
            face = Face((100.0, 80.0, 300.0, 330.0), 0.9, embedding=embedding_of[photo])
            event = DetectionEvent(
                event_id_for(camera, seq, DETECTOR), camera, seq, t, t, DETECTOR, 640, 480, (face,), embedder
            )
            producer.produce(names["detections"], pack_detection(event), camera.encode(), timestamp=t // 1_000_000)
            if camera == "gate" and alert is None:
                seen = Sighting(event.event_id, seq, t, face.box, 0.1)
                alert = Alert(
                    alert_id_for(camera, "stranger", f"{event.event_id}#0"), "stranger", "new", camera, t, t, (seen,), 1
                )
    assert alert is not None
    kafka_clients.send(producer, names["alerts"], pack_alert(alert), b"gate")
    assert producer.flush(30) == 0
    return alert


def test_a_face_is_found_across_cameras_audited_and_erased_on_request(
    names: dict, bootstrap: str, sample_dir: Path, tmp_path: Path
) -> None:
    alert = camera_history(names, sample_dir)
    database = f"sqlite:///{tmp_path / 'alerts.db'}"
    store = store_on(names, database, sightings=True, stop_after_idle_s=5.0)
    done = subprocess.run(alert_store_command(store), capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    engine = open_database(database)
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(sightings)).scalar_one() == 8
    enrol(names, "Barack Obama", sample_dir / "obama.jpg")
    port = free_port()
    make_users(database, {AUDITOR: "admin"})
    token = api_token(database, AUDITOR)
    client = Client(port, token=token)
    config = dashboard_on(names, port, database, search=True)
    with open(tmp_path / "dashboard.log", "wb") as out:
        page = subprocess.Popen(dashboard_command(config), stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_until(lambda: get(port, "/readyz")[0] == 200, 60, "the dashboard ready")
        status, body = client.call(
            "POST", "/api/search?since=24h&photo=obama.jpg", (sample_dir / "obama.jpg").read_bytes()
        )
        assert status == 200, body
        found = json.loads(body)
        assert [(v["camera_id"], len(v["sightings"])) for v in found["visits"]] == [("hall", 2), ("door", 3)]
        assert found["sightings"] == 5 and all(v["best_similarity"] >= 0.5 for v in found["visits"])
        assert (
            len(
                json.loads(client.call("POST", "/api/search?since=30m", (sample_dir / "obama.jpg").read_bytes())[1])[
                    "visits"
                ]
            )
            == 1
        )

        status, jpeg = client.call("GET", found["visits"][0]["sightings"][0]["frame"])
        assert status == 200 and jpeg[:2] == b"\xff\xd8"

        by_alert = json.loads(client.call("POST", f"/api/search?alert={alert.alert_id}&face=0")[1])
        assert [(v["camera_id"], len(v["sightings"])) for v in by_alert["visits"]] == [("gate", 3)]

        with chromium() as browser:  # the page: a photo uploaded, then the live page's link from an alert
            sign_in_page(browser, port, AUDITOR, "search")
            browser.find_element("css selector", "input[name=photo]").send_keys(str(sample_dir / "obama.jpg"))
            browser.find_element("css selector", "#query button[type=submit]").click()
            wait_until(lambda: count(browser, "#visits .visit") == 2, 60, "the visits on the page")
            cameras = [
                li.get_attribute("data-camera") for li in browser.find_elements("css selector", "#visits .visit")
            ]
            assert cameras == ["hall", "door"] and count(browser, "#timeline .lane") == 2
            wait_until(lambda: images_loaded(browser, "#visits .visit img") == 2, 30, "each visit's frame")
            browser.get(f"http://127.0.0.1:{port}/search?alert={alert.alert_id}")
            wait_until(lambda: count(browser, "#visits .visit[data-camera=gate]") == 1, 60, "the alert's face found")
            wait_until(lambda: images_loaded(browser, "#visits .visit img") == 1, 30, "its frame")
            assert console_errors(browser) == []

        said = CliRunner().invoke(
            cli, ["search", "--person", "barack-obama", "--url", f"http://127.0.0.1:{port}", "--token", token]
        )
        assert said.exit_code == 0, said.output
        assert "5 sighting(s) in 2 visit(s)" in said.output and "hall" in said.output

        erased = CliRunner().invoke(
            cli,
            ["search", "--forget", "--person", "barack-obama", "--url", f"http://127.0.0.1:{port}", "--token", token],
        )
        assert erased.exit_code == 0, erased.output
        assert "forgotten: 5 sightings (5 sightings, 1 gallery_entry, 0 alerts, 0 snapshots" in erased.output
        with engine.connect() as conn:
            left = set(conn.execute(select(sightings.c.camera_id)).scalars())
        assert left == {"gate"}  # gone from the database ...
        again = json.loads(client.call("POST", "/api/search", (sample_dir / "obama.jpg").read_bytes())[1])
        assert again["sightings"] == 0  # ... and from the index
        wait_until(
            lambda: gallery.load(bootstrap, names["gallery"]).entry("barack-obama") is None, 30, "the entry gone"
        )

        status, exported = client.call("GET", "/api/audit?format=csv")
        every = list(csv.DictReader(io.StringIO(exported.decode())))
        rows = [r for r in every if r["kind"] in ("photo", "alert", "person", "forget")]
        # every frame shown is one record: the API's one, the page's two visits, then the alert's one
        assert sum(r["kind"] == "frame" for r in every) == 4
        kinds = [
            "photo",
            "forget",
            "person",
            "alert",
            "photo",
            "alert",
            "photo",
            "photo",
        ]  # the page's two in the middle
        assert status == 200 and [r["kind"] for r in rows] == kinds
        assert {r["who"] for r in rows} == {"auditor"} and rows[1]["results"] == "5"
        assert rows[-1]["subject"].startswith("photo sha256 ") and rows[-1]["results"] == "5"

        status, _ = client.call("POST", "/api/search", b"")
        assert status == 400  # no photo, no alert, no person
        status, said = client.call("POST", "/api/search?photo=notes.txt", b"not a picture at all")
        assert status == 409 and b"notes.txt" in said, said  # the photo named, and why
        blank = cv2.imencode(".jpg", np.full((480, 640, 3), 128, np.uint8))[1].tobytes()
        status, said = client.call("POST", "/api/search?photo=wall.jpg", blank)
        assert status == 409 and b"wall.jpg: no face found" in said, said
        assert Client(port).call("GET", "/api/audit")[0] == 401  # not without an account
    finally:
        page.terminate()
        page.wait(30)
