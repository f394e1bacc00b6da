"""Teaching the gallery from the dashboard, on the real pipeline (producer, detector with embeddings,
alerting worker, dashboard) and in Chromium: "this is NAME" on a stranger alert makes the next frames
of that face raise nothing; "not this person" on a wrong person_seen turns the face into a stranger;
both are undone, from the page and from the command line."""

import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers.accounts import make_users, sign_in_page
from helpers.browser import chromium, console_errors, count, wait_until
from helpers.http import free_port, get
from helpers.kafka import detector_config, photos_to
from helpers.worker import alerting, alerts_of, dashboard_on, enrol, pipeline_names, scene, states, stop

from facestream import gallery
from facestream.dashboard.config import dashboard_command
from facestream.detector_service.config import detector_command
from facestream.tools.cli import cli

TEACHER = "teacher"  # the role identity: teaches the gallery
FPS = 2.0


@pytest.fixture
def names(bootstrap: str) -> dict[str, str]:
    return pipeline_names("t", bootstrap)


def test_teaching_from_the_page_changes_what_the_rules_see_and_can_be_undone(
    names: dict, bootstrap: str, sample_dir: Path, tmp_path: Path
) -> None:
    enrol(names, "Barack Obama", sample_dir / "obama.jpg")
    assert CliRunner().invoke(cli, ["gallery", "watch", "Barack Obama", "--topic", names["gallery"]]).exit_code == 0
    topics = {k: names[k] for k in ("frames", "detections", "dlq", "group")}
    detector = subprocess.Popen(
        detector_command(detector_config(topics, embedder="sface", batch=8, max_wait_ms=20.0, stop_after_idle_s=120.0)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    log = tmp_path / "alerting.log"
    worker = alerting(names, log, rules="stranger,person_seen")
    port, page_log = free_port(), tmp_path / "dashboard.log"
    database = f"sqlite:///{tmp_path / 'alerts.db'}"
    make_users(database, {TEACHER: "identity"})
    config = dashboard_on(names, port, database)
    with open(page_log, "wb") as out:
        page_proc = subprocess.Popen(dashboard_command(config), stdout=out, stderr=subprocess.STDOUT)

    def footage(round_: int) -> None:
        """Biden (a stranger) at the gate and Obama (watched) at the door, 3 s each, then 6 s empty."""
        cameras = {
            camera: scene(tmp_path / f"{camera}-{round_}", [(sample_dir / photo, 6)], 12)
            for camera, photo in (("gate", "biden.jpg"), ("door", "obama2.jpg"))
        }
        photos_to(names["frames"], cameras, fps=FPS, max_width=0, start_seq=18 * round_)

    try:
        wait_until("the dashboard ready", lambda: get(port, "/readyz")[0] == 200, 60)
        footage(0)
        with chromium() as page:
            sign_in_page(page, port, TEACHER)
            stranger, seen = (
                ".alert[data-kind=stranger][data-camera=gate]",
                ".alert[data-kind=person_seen][data-camera=door]",
            )
            wait_until("the stranger and the watched person", lambda: count(page, stranger) and count(page, seen), 180)
            page.find_element("css selector", f"{stranger} input.name").send_keys("Joe Biden")
            page.find_element("css selector", f"{stranger} button.enrol").click()
            page.find_element("css selector", f"{seen} button.not-person").click()
            wait_until(
                "what both taught",
                lambda: count(page, ".alert .taught") == 2,
                60,
                lambda: f"{teach_boxes(page)}\n{page_log.read_text(errors='replace')[-3000:]}",
            )
            assert "enrolled as Joe Biden" in page.find_element("css selector", f"{stranger} .taught").text
            assert "not Barack Obama" in page.find_element("css selector", f"{seen} .taught").text
            known = gallery.load(bootstrap, names["gallery"])
            biden, obama = known.entry("joe-biden"), known.entry("barack-obama")
            assert biden is not None and biden.images[0].startswith("alert:") and len(obama.negatives) >= 2

            footage(1)  # the same faces again, later, on the same cameras

            def door_stranger(alerts: list) -> bool:
                return "end" in states(alerts, "door", "stranger")

            wait_until("a stranger at the door", lambda: door_stranger(alerts_of(bootstrap, names)), 180)
            alerts = alerts_of(bootstrap, names)
            gate = {a.alert_id for a in alerts if a.camera_id == "gate"}
            assert len(gate) == 1  # Biden, now known, raised nothing the second time
            assert len({a.alert_id for a in alerts if a.kind == "person_seen"}) == 1  # nor Obama's look-alike

            page.find_element("css selector", f"{stranger} button.undo").click()
            wait_until("the undone lesson", lambda: count(page, f"{stranger} .taught") == 0, 60)
            assert gallery.load(bootstrap, names["gallery"]).entry("joe-biden") is None
            assert console_errors(page) == []
        door_alert = next(a.alert_id for a in alerts if a.kind == "person_seen")
        undone = CliRunner().invoke(cli, ["gallery", "undo", door_alert, "--topic", names["gallery"]])
        assert undone.exit_code == 0, undone.output
        assert gallery.load(bootstrap, names["gallery"]).entry("barack-obama").negatives == ()
        assert "teacher taught that the faces of alert" in page_log.read_text()
    finally:
        stop(worker, log)
        detector.terminate()
        page_proc.terminate()
        detector.wait(30)
        page_proc.wait(30)


def teach_boxes(page) -> str:
    """Each alert's teaching box as the page shows it: what was taught, or what the dashboard answered."""
    return "\n".join(
        f"{item.get_attribute('data-kind')}@{item.get_attribute('data-camera')}: "
        f"{item.find_element('css selector', '.teach').text!r}"
        for item in page.find_elements("css selector", ".alert")
    )
