"""The dashboard on a test's own topics of the real broker, signed in (tests/e2e/test_access.py tests
the accounts themselves): an alert's evidence frame read back from Kafka, unreadable records counted
and logged, and the page in Chromium."""

import dataclasses
import json
import os
import re
import resource
import signal
import time
import urllib.error
import urllib.request
from pathlib import Path

import cv2
import numpy as np
from helpers.accounts import DASHBOARD_ADMIN as ADMIN
from helpers.accounts import sign_in_page
from helpers.browser import chromium, console_errors, count, images_loaded, wait_until
from helpers.http import get
from helpers.prometheus import check_metrics
from helpers.store import OPENED, S, received

from facestream import gallery, kafka_clients
from facestream.alertdb import open_database
from facestream.alertdb.writer import AlertWriter
from facestream.schemas import (
    Alert,
    CameraStatus,
    DetectionEvent,
    Face,
    Frame,
    ModelRef,
    Sighting,
    pack_alert,
    pack_camera_status,
    pack_detection,
    pack_frame,
)
from facestream.schemas.kinds import ALERT_KINDS, KINDS

MODEL = ModelRef("yunet", "2023mar", "0" * 64)


def fetch(port: int, path: str, headers: dict | None = None) -> tuple[int, bytes, str]:
    """(status, body, Set-Cookie) of ``path``."""
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=15) as response:
            return response.status, response.read(), response.headers.get("set-cookie", "")
    except urllib.error.HTTPError as error:
        return error.code, error.read(), ""


def test_the_group_reader_aborting_costs_the_page_one_read(page_on_topics) -> None:
    # librdkafka 2.16 aborts a process whose admin request to a group's coordinator loses its broker
    # (dashboard/groups.py): it took the whole dashboard down in a rolling restart of a cluster. The
    # groups are read in a child process now; here it gets the same SIGABRT.
    _names, port, log, _db, auth = page_on_topics

    def readers() -> list[int]:
        return [int(pid) for pid in re.findall(r"reading the consumer groups in process (\d+)", log.read_text())]

    wait_until("the groups' reader", lambda: len(readers()) == 1, 30, log.read_text)
    resource.prlimit(readers()[0], resource.RLIMIT_CORE, (0, 0))  # the abort leaves no core file behind
    os.kill(readers()[0], signal.SIGABRT)
    wait_until("another groups' reader", lambda: len(readers()) == 2, 30, log.read_text)
    assert "ended with exit code -6 (librdkafka aborted it); starting another" in log.read_text()

    def unreadable() -> bool:
        groups = json.loads(fetch(port, "/api/state", auth)[1])["groups"]
        return any(group["group"] == "(unreadable)" for group in groups)

    wait_until("the groups read again", lambda: not unreadable(), 30, log.read_text)
    assert "facestream_dashboard_group_reader_restarts_total 1.0" in fetch(port, "/metrics", auth)[1].decode()
    assert get(port, "/readyz")[0] == 200


def test_an_alert_s_evidence_frame_comes_back_from_kafka_and_the_page_shows_it(
    page_on_topics, bootstrap: str, sample_dir: Path, tmp_path: Path
) -> None:
    names, port, log, _db, auth = page_on_topics
    producer = kafka_clients.producer("dashboard-test", bootstrap)
    photo = (sample_dir / "biden.jpg").read_bytes()
    now = time.time_ns()
    frame = Frame("gate", 7, now, 1280, 2082, photo)
    face = Face((574.0, 225.0, 820.0, 546.0), 0.94)
    event = DetectionEvent("e7", "gate", 7, now, now + 200_000_000, MODEL, 1280, 2082, (face,))
    sighting = Sighting("e7", 7, now, face.box, 0.11)
    alert = Alert("alert-1", "stranger", "new", "gate", now, now, (sighting,), 1, zone="door")
    with chromium() as page:
        sign_in_page(page, port, ADMIN)
        wait_until("the page live", lambda: "live" in page.find_element("id", "status").text, 20)
        kafka_clients.send(producer, names["frames"], pack_frame(frame), key=b"gate")
        producer.flush(10)
        time.sleep(0.5)  # the event after its frame, as the detector makes it
        kafka_clients.send(producer, names["detections"], pack_detection(event), key=b"gate")
        kafka_clients.send(producer, names["detections"], b"\x93not an event", key=b"gate")
        kafka_clients.send(producer, names["alerts"], pack_alert(alert), key=b"gate")
        producer.flush(10)
        wait_until("the gate's tile with a face", lambda: count(page, ".tile[data-camera=gate] rect.face") == 1, 30)
        wait_until("the alert", lambda: count(page, ".alert[data-kind=stranger][data-state=new]") == 1, 30)
        wait_until("its evidence frame", lambda: images_loaded(page, ".alert img") == 1, 30)
        # The camera's zones drawn on its tile, the one the open alert names standing out.
        wait_until("the zones", lambda: count(page, ".tile[data-camera=gate] polygon.zone") == 2, 30)
        wait_until("the alerting zone", lambda: count(page, "polygon.zone.alerting[data-zone=door]") == 1, 30)
        assert count(page, "polygon.zone.alerting") == 1
        # Its line, with the arrow of a forward crossing: drawn top to bottom, so pointing right.
        assert count(page, ".tile[data-camera=gate] line.line[data-line=entrance]") == 1
        arrow = page.find_element("css selector", ".tile[data-camera=gate] line.line-way")
        assert float(arrow.get_attribute("x2")) > float(arrow.get_attribute("x1"))
        assert "gate · door" in page.find_element("css selector", ".alert .where").text
        assert console_errors(page) == []
        page.save_screenshot(str(tmp_path / "page.png"))
    status, jpeg, _ = fetch(port, "/evidence/alert-1.jpg", auth)
    assert status == 200 and jpeg[:2] == b"\xff\xd8" and len(jpeg) > 10_000  # the photo, with its box drawn
    assert fetch(port, "/evidence/nope.jpg", auth)[0] == 404
    status, metrics, _ = fetch(port, "/metrics", auth)
    line = f'facestream_dashboard_unreadable_records_total{{topic="{names["detections"]}"}} 1.0'
    assert line in metrics.decode()
    check_metrics(metrics.decode())
    assert f"unreadable record at {names['detections']}/" in log.read_text()


def test_a_person_is_enrolled_from_a_photo_uploaded_on_the_page(
    page_on_topics, bootstrap: str, sample_dir: Path, tmp_path: Path
) -> None:
    names, port, log, _db, auth = page_on_topics
    blank = tmp_path / "wall.jpg"
    cv2.imwrite(str(blank), np.full((240, 320, 3), 90, np.uint8))
    takeo = cv2.imread(str(sample_dir / "takeo.ppm"))
    tiny = tmp_path / "takeo-tiny.jpg"  # his face 22 px high: too small to recognise anyone by
    cv2.imwrite(str(tiny), cv2.resize(takeo, (takeo.shape[1] // 4, takeo.shape[0] // 4), interpolation=cv2.INTER_AREA))
    with chromium() as page:
        sign_in_page(page, port, ADMIN)

        def upload(name: str, photo: Path) -> str:
            form = page.find_element("id", "enrol")
            form.find_element("name", "name").send_keys(name)
            form.find_element("name", "photo").send_keys(str(photo))
            form.find_element("css selector", "button").click()
            said = form.find_element("css selector", ".enrol-said")
            wait_until("the enrolment's answer", lambda: said.text not in ("", "…"), 60)
            return said.text

        assert upload("Barack Obama", sample_dir / "obama.jpg") == "enrolled Barack Obama (1 face(s))"
        assert "wall.jpg: no face found" in upload("Nobody", blank)
        assert "takeo-tiny.jpg: the face is too small (22 px" in upload("Takeo Kanade", tiny)
        assert [e for e in console_errors(page) if "409 (Conflict)" not in e] == []  # the refusal, as shown
    entry = gallery.load(bootstrap, names["gallery"]).entry("barack-obama")
    assert entry.images == ("obama.jpg",) and len(entry.embeddings) == 1
    assert "enrolled Barack Obama (barack-obama) from the photo obama.jpg" in log.read_text()


def test_a_camera_that_is_down_shows_its_producer_s_word_and_its_offline_alert(page_on_topics, bootstrap: str) -> None:
    names, port, _log, _db, _auth = page_on_topics
    producer = kafka_clients.producer("dashboard-test", bootstrap)
    now = time.time_ns()
    down = CameraStatus(
        "door", now, "reconnecting", "rtsp://***@10.0.0.7/s1", 120, 3, 5000, now - 40_000_000_000, "Connection refused"
    )
    alert = Alert(
        "alert-off",
        "camera_offline",
        "new",
        "door",
        now - 40_000_000_000,
        now,
        (),
        3,
        reason="reconnecting: Connection refused",
    )
    with chromium() as page:
        sign_in_page(page, port, ADMIN)
        wait_until("the page live", lambda: "live" in page.find_element("id", "status").text, 20)
        kafka_clients.send(producer, names["status"], pack_camera_status(down), key=b"door")
        kafka_clients.send(producer, names["alerts"], pack_alert(alert), key=b"door")
        producer.flush(10)
        wait_until(
            "the door's tile down",
            lambda: count(page, ".tile.down[data-camera=door][data-state=reconnecting]") == 1,
            30,
        )
        wait_until(
            "the offline alert", lambda: count(page, ".alert[data-kind=camera_offline][data-state=new]") == 1, 30
        )
        tile = page.find_element("css selector", ".tile[data-camera=door] .state").text
        assert tile == "reconnecting · attempt 4 · Connection refused"
        item = page.find_element("css selector", ".alert[data-kind=camera_offline]")
        assert "reconnecting: Connection refused" in item.text and count(page, ".alert img") == 0
        assert console_errors(page) == []


def test_the_history_filters_pages_shows_snapshots_and_marks_reviews(page_on_topics, sample_dir: Path) -> None:
    _names, port, _log, database, auth = page_on_topics
    writer = AlertWriter(open_database(database), "store")
    now = time.time_ns()
    batch = []
    for i in range(60):  # a minute of alerts, newest last
        alert = dataclasses.replace(
            OPENED, alert_id=f"alert-{i:02d}", camera_id=("gate", "door")[i % 2], updated_ts_ns=now - (60 - i) * S
        )
        batch.append(received(alert, i))
    writer.write(batch)
    writer.keep_snapshot("alert-59", "kept", (sample_dir / "obama.jpg").read_bytes())
    with chromium() as page:
        sign_in_page(page, port, ADMIN, "history")
        wait_until("the newest page", lambda: count(page, "#history .alert") == 50, 20)
        options = page.find_elements("css selector", "select[name=kind] option")
        assert [o.get_attribute("value") for o in options] == ["", *KINDS]  # the table of kinds, from the API
        first = page.find_element("css selector", "#history .alert").get_attribute("data-alert-id")
        assert first == "alert-59"
        wait_until("its snapshot", lambda: images_loaded(page, "#history img") == 1, 20)
        page.find_element("id", "older").click()
        wait_until("the older page", lambda: count(page, "#history .alert") == 10, 20)
        page.find_element("id", "newest").click()
        wait_until("the newest page again", lambda: count(page, "#history .alert") == 50, 20)
        page.find_element("css selector", "input[name=camera]").send_keys("door")
        page.find_element("css selector", "#filters button").click()
        wait_until("door's alerts", lambda: count(page, "#history .alert[data-camera=door]") == 30, 20)
        assert count(page, "#history .alert[data-camera=gate]") == 0
        for box in page.find_elements("css selector", "#history .pick")[:2]:
            box.click()
        page.find_element("id", "review").click()
        wait_until("two reviewed", lambda: count(page, "#history .alert[data-reviewed=yes]") == 2, 20)
        assert f"reviewed by {ADMIN}" in page.find_element("css selector", ".alert[data-reviewed=yes]").text
        assert console_errors(page) == []
    status, body, _ = fetch(port, "/api/alerts?reviewed=yes&limit=5", auth)
    assert status == 200 and [a["alert_id"] for a in json.loads(body)["alerts"]] == ["alert-59", "alert-57"]
    status, body, _ = fetch(port, "/api/alerts?alert=alert-03", auth)
    assert [a["alert_id"] for a in json.loads(body)["alerts"]] == ["alert-03"]
    assert fetch(port, "/api/alerts?limit=0", auth)[0] == 400
    status, body, _ = fetch(port, "/api/kinds", auth)
    assert status == 200 and json.loads(body)["kinds"] == [kind.fields() for kind in ALERT_KINDS]
    assert fetch(port, "/api/alerts")[0] == 401
