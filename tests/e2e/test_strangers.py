"""Recurring strangers and journeys on the real pipeline (producer, detector with SFace, alerting worker,
alert store with sightings, dashboard) and in Chromium: a stranger seen at the gate and later at the
door is one label with two visits in order, another stranger another label; naming one from the page
enrols them, "not this person" splits a visit off; a named person's journey comes from the sightings;
every journey shown and change made is in the audit log."""

import json
import subprocess
from pathlib import Path

import pytest
from helpers.accounts import Client, api_token, make_users, sign_in_page
from helpers.browser import chromium, console_errors, count, images_loaded, wait_until
from helpers.http import free_port, get
from helpers.kafka import detector_config, photos_to
from helpers.worker import alerting, dashboard_on, pipeline_names, scene, stop, store_on

from facestream import gallery, kafka_topics
from facestream.alert_store.config import alert_store_command
from facestream.dashboard.config import dashboard_command
from facestream.detector_service.config import detector_command

WARDEN = "warden"  # an admin: strangers, journeys and the audit log
FPS = 2.0


@pytest.fixture
def names(bootstrap: str) -> dict[str, str]:
    names = pipeline_names("r", bootstrap)
    kafka_topics.ensure_topics({names["alerts"]: 1}, bootstrap)
    return names


def listed(client: Client) -> list[dict]:
    status, body = client.call("GET", "/api/strangers")
    return json.loads(body)["strangers"] if status == 200 else []


def test_a_stranger_who_comes_back_is_one_label_named_and_split_on_the_page(
    names: dict, bootstrap: str, sample_dir: Path, tmp_path: Path
) -> None:
    topics = {k: names[k] for k in ("frames", "detections", "dlq", "group")}
    detector = subprocess.Popen(
        detector_command(detector_config(topics, embedder="sface", batch=8, max_wait_ms=20.0, stop_after_idle_s=300.0)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    log = tmp_path / "alerting.log"
    worker = alerting(names, log, rules="stranger")
    database = f"sqlite:///{tmp_path / 'alerts.db'}"
    store_config = store_on(names, database, sightings=True)
    store_log, page_log, port = tmp_path / "store.log", tmp_path / "dashboard.log", free_port()
    with open(store_log, "wb") as out:
        store = subprocess.Popen(alert_store_command(store_config), stdout=out, stderr=subprocess.STDOUT)
    with open(page_log, "wb") as out:
        make_users(database, {WARDEN: "admin"})
        client = Client(port, token=api_token(database, WARDEN))
        config = dashboard_on(names, port, database, search=True)
        page_proc = subprocess.Popen(dashboard_command(config), stdout=out, stderr=subprocess.STDOUT)

    def footage(cameras: dict[str, str], round_: int) -> None:
        """Each camera's stranger for 3 s, then 6 s without anyone (the visit ends)."""
        folders = {
            camera: scene(tmp_path / f"{camera}-{round_}", [(sample_dir / photo, 6)], 12)
            for camera, photo in cameras.items()
        }
        photos_to(names["frames"], folders, fps=FPS, max_width=0)

    def logs() -> str:
        return "\n".join(p.read_text(errors="replace")[-2000:] for p in (log, store_log, page_log))

    try:
        wait_until("the dashboard ready", lambda: get(port, "/readyz")[0] == 200, 60)
        footage({"gate": "biden.jpg", "yard": "obama2.jpg"}, 0)
        footage({"door": "biden.jpg"}, 1)  # the first stranger again, later, on another camera
        wait_until(
            "two strangers, one of them seen twice",
            lambda: sorted(s["visits"] for s in listed(client)) == [1, 2],
            180,
            lambda: f"{listed(client)}\n{logs()}",
        )
        biden = next(s for s in listed(client) if s["visits"] == 2)
        assert biden["cameras"] == ["gate", "door"] and biden["label"].startswith("unknown-")

        status, body = client.call("GET", "/api/alerts?kind=stranger&camera=gate")
        (gate_alert,) = json.loads(body)["alerts"]
        assert gate_alert["stranger"] == {"label": biden["label"], "name": None}
        assert gate_alert["journey"] == f"/api/strangers/{biden['label']}/journey"

        with chromium() as page:
            sign_in_page(page, port, WARDEN, "strangers")
            wait_until("both strangers on the page", lambda: count(page, "#strangers .stranger") == 2, 60)
            mine = f"#strangers .stranger[data-label='{biden['label']}']"
            page.find_element("css selector", f"{mine} button.journey").click()
            wait_until("the journey", lambda: count(page, "#visits .visit") == 2, 60)
            cameras = [li.get_attribute("data-camera") for li in page.find_elements("css selector", "#visits .visit")]
            assert cameras == ["gate", "door"]  # in the order they happened
            wait_until("each visit's face", lambda: images_loaded(page, "#visits .visit img") == 2, 90, logs)

            page.find_element("css selector", f"{mine} input[name=name]").send_keys("Joe Biden")
            page.find_element("css selector", f"{mine} form.name button").click()
            wait_until("named", lambda: "is Joe Biden" in page.find_element("css selector", "#said").text, 90, logs)
            assert "2 visit(s) enrolled" in page.find_element("css selector", "#said").text
            wait_until(
                "the name on the page",
                lambda: "joe biden (was unknown-" in page.find_element("css selector", mine).text.lower(),
                30,
                lambda: f"{listed(client)}\n{page.find_element('css selector', '#strangers').text}",
            )
            known = gallery.load(bootstrap, names["gallery"]).entry("joe-biden")
            assert known is not None and len(known.embeddings) >= 2

            page.find_element("css selector", "#visits .visit[data-camera=door] button.split").click()
            wait_until("the door's visit on its own", lambda: count(page, "#strangers .stranger") == 3, 60)
            wait_until("the journey without it", lambda: count(page, "#visits .visit") == 1, 30)
            assert console_errors(page) == []

        status, body = client.call("GET", "/api/journey?person=joe-biden")
        assert status == 200, body
        journey = json.loads(body)
        assert [v["camera_id"] for v in journey["visits"]] == ["gate", "door"]  # from the sightings, in order
        assert all(v["best"]["frame"].endswith(".jpg") for v in journey["visits"])

        status, body = client.call("GET", "/api/audit")
        kinds = [entry["kind"] for entry in json.loads(body)["entries"] if entry["kind"] not in ("snapshot", "login")]
        assert kinds == ["person", "journey", "split", "name", "journey"], kinds
    finally:
        stop(worker, log)
        for process in (detector, store, page_proc):
            process.terminate()
            process.wait(30)
