"""Accounts and roles on a running dashboard (the real broker, its SQLite database, Chromium, and
Debian's nginx as an identity-aware proxy): every route asked by every role, the pages each role
sees, one audit record per face shown, and the attacks a page like this meets."""

import base64
import csv
import dataclasses
import io
import json
import subprocess
import time
import uuid
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
import pytest
from click.testing import CliRunner
from helpers.accounts import Client, make_users, sign_in_page
from helpers.browser import chromium, console_errors, count, images_loaded, wait_until
from helpers.http import free_port, get
from helpers.proxy import PROXY_ADDRESS, basic_auth_proxy
from helpers.store import OPENED, S, received
from helpers.worker import dashboard_on, store_on

from facestream import kafka_clients, kafka_topics
from facestream.alert_store.config import alert_store_command
from facestream.alertdb import open_database
from facestream.alertdb.accounts import ROLES
from facestream.alertdb.writer import AlertWriter
from facestream.dashboard.access import PAGES, PUBLIC, ROUTES
from facestream.dashboard.config import dashboard_command
from facestream.schemas import (
    Alert,
    DetectionEvent,
    Face,
    Frame,
    GalleryEntry,
    ModelRef,
    Sighting,
    pack_alert,
    pack_detection,
    pack_frame,
    pack_gallery_entry,
)
from facestream.tools.cli import cli

PEOPLE = {"vic": "viewer", "rita": "reviewer", "ida": "identity", "ada": "admin"}
# a value for each path parameter of ROUTES: none of them exists, so an allowed request changes nothing
PARAMETERS = {
    "{camera}": "gate",
    "{seq:int}": "1",
    "{alert_id}": "no-such-alert",
    "{sighting_id:int}": "1",
    "{label}": "unknown-999",
    "{name}": "nobody",
    "*": "page.js",
}
MENU = {"/": "Live", "/history": "History", "/search": "Search", "/strangers": "Strangers", "/admin": "Admin"}
MODEL, EMBEDDER = ModelRef("yunet", "2023mar", "0" * 64), ModelRef("sface", "2021dec", "1" * 64)
HOSTILE = "Robert'); DROP TABLE alerts; -- <script>document.title='owned'</script><img src=x onerror=alert(1)>"


@dataclass(frozen=True)
class Site:
    port: int
    database: str
    names: dict
    log: Path


@pytest.fixture
def site(bootstrap: str, tmp_path: Path, sample_dir: Path):
    tag = uuid.uuid4().hex[:10]
    names = {part: f"a-{tag}.{part}" for part in ("frames", "detections", "poses", "alerts", "status", "gallery")}
    kafka_topics.ensure_topics(dict.fromkeys(names.values(), 1), bootstrap)
    port, database = free_port(), f"sqlite:///{tmp_path / 'alerts.db'}"
    make_users(database, PEOPLE)
    writer = AlertWriter(open_database(database), "store")  # three kept alerts, each with its snapshot
    now = time.time_ns()
    kept = [dataclasses.replace(OPENED, alert_id=f"kept-{i}", updated_ts_ns=now - (3 - i) * S) for i in range(3)]
    writer.write([received(alert, i) for i, alert in enumerate(kept)])
    for alert in kept:
        writer.keep_snapshot(alert.alert_id, "kept", (sample_dir / "obama.jpg").read_bytes())
    config = dashboard_on(
        names,
        port,
        database,
        search=True,
        trusted_proxies=PROXY_ADDRESS,
        user_header="Remote-User",
        blur_unwatched=True,
    )
    log = tmp_path / "dashboard.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(dashboard_command(config), stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_until("the dashboard ready", lambda: get(port, "/readyz")[0] == 200, 60)
        yield Site(port, database, names, log)
    finally:
        proc.terminate()
        assert proc.wait(timeout=30) == 0, log.read_text()[-3000:]


def concrete(path: str) -> str:
    for parameter, value in PARAMETERS.items():
        path = path.replace(parameter, value)
    return path


def allowed(role: str, needed: str) -> bool:
    return needed == PUBLIC or ROLES.index(role) >= ROLES.index(needed)


def audit_of(site: Site, **filters: str) -> list[dict]:
    admin = Client(site.port).sign_in("ada")
    status, body = admin.call("GET", "/api/audit?limit=10000&" + "&".join(f"{k}={v}" for k, v in filters.items()))
    assert status == 200, body
    return json.loads(body)["entries"]


def test_every_route_answers_every_role_as_the_table_says(site: Site) -> None:
    callers = {name: Client(site.port).sign_in(name) for name in PEOPLE}
    covered, asked = set(), 0
    for key, (needed, _what) in ROUTES.items():
        if key == "POST /logout":
            continue  # ends the session: asked last, below
        method, path = key.split(" ", 1)
        url = concrete(path)
        body = {} if method == "POST" else None
        for name, role in [*PEOPLE.items(), (None, None)]:
            client = callers[name] if name else Client(site.port)
            status, said = client.call(method, url, body, read=path != "/events")
            asked += 1
            if role is None and needed != PUBLIC:  # nobody signed in: to the sign-in page, or 401
                assert status == (303 if method == "GET" and path in PAGES else 401), (key, status, said)
            elif allowed(role or "viewer", needed):
                assert status not in (401, 403), (key, name, status, said)
            else:
                assert status == 403 and f"this needs the role {needed}".encode() in said, (key, name, status, said)
        covered.add(key)
    for client in callers.values():
        assert client.call("POST", "/logout")[0] == 200
        assert client.call("GET", "/api/me")[0] == 401
    covered.add("POST /logout")
    assert covered == set(ROUTES) and asked == 5 * (len(ROUTES) - 1)
    print(f"{len(covered)} routes x {len(PEOPLE) + 1} callers (4 roles and nobody): {asked + 4} requests")


def test_each_role_sees_only_its_pages_in_chromium(site: Site) -> None:
    with chromium() as page:
        for name, role in PEOPLE.items():
            sign_in_page(page, site.port, name)
            wait_until(f"{name}'s menu", lambda: count(page, "nav.ready") == 1, 20)
            menu = [link.text for link in page.find_elements("css selector", "nav a")]
            assert menu == [MENU[p] for p in PAGES if allowed(role, ROUTES[f"GET {p}"][0])], (name, menu)
            assert f"{name} ({role})" in page.find_element("css selector", ".who").text
            for path in PAGES:
                page.get(f"http://127.0.0.1:{site.port}{path}")
                body = page.find_element("tag name", "body").text
                if allowed(role, ROUTES[f"GET {path}"][0]):
                    assert "this needs the role" not in body and page.title.startswith("facestream"), (name, path)
                else:
                    assert f"this needs the role {ROUTES[f'GET {path}'][0]}" in body, (name, path)
            page.get(f"http://127.0.0.1:{site.port}/history")
            wait_until("the kept alerts", lambda: count(page, "#history .alert") == 3, 20)
            offered = allowed(role, "reviewer")
            wait_until("review offered as the role allows", lambda: _reviewing(page) == offered, 20)  # noqa: B023
            page.find_element("css selector", "button.signout").click()
            wait_until(f"{name} signed out", lambda: "/login" in page.current_url, 20)
        errors = console_errors(page)
        assert [e for e in errors if "403 (Forbidden)" not in e] == [], errors


def _reviewing(page) -> bool:
    return page.find_element("css selector", ".actions .reviewing").is_displayed()


def test_every_face_shown_is_one_audit_record(site: Site, bootstrap: str, sample_dir: Path) -> None:
    producer = kafka_clients.producer("access-test", bootstrap)
    now = time.time_ns()
    frame = Frame("gate", 7, now, 1280, 2082, (sample_dir / "biden.jpg").read_bytes())
    face = Face((574.0, 225.0, 820.0, 546.0), 0.94)
    alert = Alert("live-1", "stranger", "new", "gate", now, now, (Sighting("e7", 7, now, face.box, 0.11),), 1)
    with chromium() as page:
        sign_in_page(page, site.port, "vic")
        wait_until("the page live", lambda: "live" in page.find_element("id", "status").text, 20)
        kafka_clients.send(producer, site.names["frames"], pack_frame(frame), key=b"gate")
        kafka_clients.send(producer, site.names["alerts"], pack_alert(alert), key=b"gate")
        assert producer.flush(10) == 0
        wait_until("the alert's evidence frame", lambda: images_loaded(page, ".alert img") == 1, 30)
        shown = images_loaded(page, ".alert img")
        for _ in range(2):  # the history twice: each showing of a snapshot is a look
            page.get(f"http://127.0.0.1:{site.port}/history")
            wait_until("the snapshots", lambda: images_loaded(page, "#history img") == 3, 20)
            shown += images_loaded(page, "#history img")
    looks = Counter(entry["kind"] for entry in audit_of(site, who="vic"))
    assert looks["evidence"] + looks["snapshot"] == shown == 7, looks
    assert looks["evidence"] == 1 and looks["live"] == 1  # the live page opened once
    records = audit_of(site, who="vic", kind="snapshot")
    assert {r["subject"] for r in records} == {f"alert kept-{i}" for i in range(3)}
    assert all(r["address"] == "127.0.0.1" for r in records)

    reviewer = Client(site.port).sign_in("rita")
    assert reviewer.call("POST", "/api/alerts/review", {"alert_ids": ["kept-0"], "comment": "seen"})[0] == 200
    assert reviewer.call("GET", "/snapshots/kept-0.jpg")[0] == 200
    kinds = Counter(entry["kind"] for entry in audit_of(site, who="rita"))
    assert kinds == {"login": 1, "review": 1, "snapshot": 1}, kinds


def test_attacks_are_refused_and_text_stays_text(site: Site) -> None:
    # Wrong passwords: five, then even the right one waits; each logged and audited.
    guesser = Client(site.port)
    for _ in range(5):
        assert guesser.call("POST", "/login", {"name": "ada", "password": "guess-guess"})[0] == 401
    status, said = guesser.call("POST", "/login", {"name": "ada", "password": "correct-horse-battery"})
    assert status == 429 and b"too many failed attempts" in said
    assert site.log.read_text().count("sign-in refused for 'ada' from 127.0.0.1") == 6
    # A stolen cookie replayed after its owner signed out.
    victim = Client(site.port).sign_in("rita")
    stolen = victim.cookie()
    assert victim.call("POST", "/logout")[0] == 200
    thief = Client(site.port)
    assert thief.call("GET", "/api/me", headers={"Cookie": f"facestream_session={stolen}"})[0] == 401
    # A cross-site POST: another origin, or no CSRF token, or a form's encoding.
    rita = Client(site.port).sign_in("rita")
    review = {"alert_ids": ["kept-1"]}
    assert rita.call("POST", "/api/alerts/review", review, {"Origin": "http://evil.example"})[0] == 403
    assert rita.call("POST", "/api/alerts/review", review, {"X-CSRF-Token": "forged"})[0] == 403
    form = b"name=ada&password=correct-horse-battery"
    headers = {"Content-Type": "application/x-www-form-urlencoded", "Origin": "http://evil.example"}
    assert Client(site.port).call("POST", "/login", form, headers)[0] == 403
    # A path outside the page: a sign-in never sends anyone elsewhere; no file outside static/.
    for elsewhere in ("https://evil.example/", "//evil.example", "javascript:alert(1)", "../../etc/passwd"):
        status, said = Client(site.port).call(
            "POST", "/login", {"name": "ida", "password": "correct-horse-battery", "next": elsewhere}
        )
        assert status == 200 and json.loads(said)["next"] == "", elsewhere
    for path in ("/static/../alerts.db", "/static/%2e%2e/%2e%2e/pyproject.toml", "/static//etc/passwd"):
        assert Client(site.port).call("GET", path)[0] == 404, path
    # SQL and HTML in the text fields: kept and shown as text.
    assert rita.call("POST", "/api/alerts/review", {"alert_ids": ["kept-2"], "comment": HOSTILE})[0] == 200
    status, body = rita.call("GET", "/api/alerts?alert=kept-2")
    assert json.loads(body)["alerts"][0]["comment"] == HOSTILE
    ida = Client(site.port).sign_in("ida")  # identity: names a stranger, teaches; not an admin
    assert ida.call("POST", "/api/strangers/unknown-999/name", {"name": HOSTILE})[0] == 404  # no such stranger
    assert ida.call("POST", "/api/alerts/kept-2/teach", {"name": HOSTILE})[0] == 409  # its faces are not in Kafka
    assert ida.call("POST", "/api/users", {"name": "mallory", "role": "admin"})[0] == 403
    with chromium() as page:
        sign_in_page(page, site.port, "rita", "history")
        wait_until("the kept alerts", lambda: count(page, "#history .alert") == 3, 20)
        shown = page.find_element("css selector", ".alert[data-alert-id=kept-2] .comment")
        assert shown.text == HOSTILE and page.title == "facestream history"
        assert count(page, ".comment script") == 0 and count(page, ".comment img") == 0
    assert ida.call("GET", "/api/audit?format=csv")[0] == 403  # the audit is the admin's
    root = _second_admin(site)
    status, said = root.call("POST", "/api/users", {"name": HOSTILE, "role": "viewer"})
    assert status == 409 and b"a user name is" in said  # names are plain: refused, not escaped
    rows = list(csv.DictReader(io.StringIO(root.call("GET", "/api/audit?format=csv&limit=10000")[1].decode())))
    assert any(row["kind"] == "login-refused" and row["who"] == "ada" for row in rows)
    assert any(row["kind"] == "review" and row["subject"] == "alerts kept-2" for row in rows)


def _second_admin(site: Site) -> Client:
    """ada is locked out by then: another admin reads the audit."""
    make_users(site.database, {"root": "admin"})
    return Client(site.port).sign_in("root")


def test_a_reverse_proxy_that_signs_users_in_names_them(site: Site, tmp_path: Path) -> None:
    proxy_port = free_port()
    passwords = {"ida": "proxy-pass-ida", "eve": "proxy-pass-eve"}  # eve has no account here
    with basic_auth_proxy(tmp_path / "nginx", proxy_port, site.port, passwords):
        through = Client(proxy_port)

        def basic(name: str) -> dict:
            return {"Authorization": "Basic " + base64.b64encode(f"{name}:{passwords[name]}".encode()).decode()}

        assert through.call("GET", "/api/me")[0] == 401  # nginx asks first
        status, body = through.call("GET", "/api/me", headers=basic("ida"))
        assert status == 200, (status, body, (tmp_path / "nginx" / "error.log").read_text()[-2000:])
        me = json.loads(body)
        assert status == 200 and (me["name"], me["role"], me["via"]) == ("ida", "identity", "proxy")
        assert through.call("GET", "/api/me", headers=basic("eve"))[0] == 401  # no account: no role
        # The header from anywhere else is not believed.
        assert Client(site.port).call("GET", "/api/me", headers={"Remote-User": "ada"})[0] == 401
        # A change through the proxy still needs the page's CSRF token.
        review = {"alert_ids": ["kept-0"]}
        forged = {**basic("ida"), "X-CSRF-Token": "forged"}
        assert through.call("POST", "/api/alerts/review", review, headers=forged)[0] == 403
        signed = {**basic("ida"), "X-CSRF-Token": me["csrf"]}
        assert through.call("POST", "/api/alerts/review", review, headers=signed)[0] == 200
    reviews = audit_of(site, who="ida", kind="review")
    assert len(reviews) == 1 and reviews[0]["address"] == "127.0.0.1"  # the client, from X-Forwarded-For


def test_the_admin_page_shows_how_long_each_kind_is_kept(site: Site, bootstrap: str) -> None:
    names = {**site.names, "group": f"{site.names['alerts']}.group", "dlq": f"{site.names['alerts']}.dlq"}
    store = store_on(names, site.database, prune_every_s=1.0, audit_days=30.0, snapshot_days=2.0, stop_after_idle_s=3.0)
    done = subprocess.run(alert_store_command(store), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    said = CliRunner().invoke(cli, ["kafka", "retention", f"{site.names['detections']}=0.5"])
    assert said.exit_code == 0 and f"{site.names['detections']:<24} 0.5 days" in said.output, said.output
    admin = Client(site.port).sign_in("ada")
    kept = json.loads(admin.call("GET", "/api/retention")[1])
    in_database = {row["kind"]: (row["days"], row["applied_by"]) for row in kept["database"]}
    assert in_database == {"alerts": (30.0, store.group), "evidence": (2.0, store.group), "audit": (30.0, store.group)}
    in_kafka = {row["place"]: row["days"] for row in kept["kafka"]}
    assert in_kafka[site.names["detections"]] == 0.5 and in_kafka[site.names["frames"]] == 1.0  # the broker's 24 h
    with chromium() as page:
        sign_in_page(page, site.port, "ada", "admin")
        wait_until("the retention table", lambda: count(page, "#retention tbody tr") == 7, 20)
        row = page.find_element("css selector", "#retention tr[data-kind=evidence]").text
        assert "alert_snapshots" in row and "2" in row and store.group in row
        assert console_errors(page) == []


def test_an_alert_s_clip_plays_in_chromium_while_kafka_holds_its_frames(
    site: Site, bootstrap: str, sample_dir: Path
) -> None:
    producer = kafka_clients.producer("access-test", bootstrap)
    photo = cv2.resize(cv2.imread(str(sample_dir / "biden.jpg")), (640, 480))
    jpeg = cv2.imencode(".jpg", photo)[1].tobytes()
    start = time.time_ns() - 3 * S
    for seq in range(30):  # 3 s at 10 fps
        frame = Frame("gate", seq, start + seq * S // 10, 640, 480, jpeg)
        kafka_clients.send(producer, site.names["frames"], pack_frame(frame), key=b"gate")
    assert producer.flush(10) == 0
    sighting = Sighting("e0", 0, start, (250.0, 90.0, 390.0, 260.0), 0.1)
    last = start + 29 * S // 10
    alert = Alert("clip-1", "stranger", "end", "gate", start, last, (sighting,), 30, ended_ts_ns=last)
    writer = AlertWriter(open_database(site.database), "store")
    writer.write([received(alert, 10)])
    writer.keep_snapshot("clip-1", "kept", jpeg)
    with chromium() as page:
        sign_in_page(page, site.port, "vic", "history")
        wait_until("the alerts", lambda: count(page, "#history .alert") == 4, 20)
        assert page.execute_script(
            "return document.createElement('video').canPlayType('video/mp4; codecs=\"avc1.64001e\"')"
        )
        page.find_element("css selector", ".alert[data-alert-id=clip-1] button.clip").click()
        playing = (
            "const v = document.querySelector('.alert[data-alert-id=clip-1] video'); return v && v.currentTime > 0.5"
        )
        wait_until("the clip playing", lambda: page.execute_script(playing), 30)
        size = page.execute_script(
            "const v = document.querySelector('video.clip'); return [v.videoWidth, v.videoHeight]"
        )
        assert size == [640, 480]
        page.find_element("css selector", ".alert[data-alert-id=kept-0] button.clip").click()  # no frames in Kafka
        wait_until("its frames gone", lambda: count(page, ".alert[data-alert-id=kept-0] .clip-gone") == 1, 30)
        assert count(page, ".alert[data-alert-id=kept-0] img") == 1  # the snapshot stays
        assert [e for e in console_errors(page) if "404 (Not Found)" not in e] == []
    clips = audit_of(site, who="vic", kind="clip")
    assert [r["subject"] for r in clips] == ["alert clip-1"]


def _unit(index: int) -> bytes:
    """A made-up face embedding: the unit vector along ``index`` (128 float16 values, as SFace's)."""
    vector = np.zeros(128, "<f2")
    vector[index] = 1.0
    return vector.tobytes()


def _changed(image: np.ndarray, original: np.ndarray, box: tuple[float, float, float, float]) -> float:
    """How far the inside of ``box`` is from the original photo's (mean absolute difference per value)."""
    x0, y0, x1, y1 = int(box[0]) + 6, int(box[1]) + 6, int(box[2]) - 6, int(box[3]) - 6
    return float(np.abs(image[y0:y1, x0:x1].astype(np.int16) - original[y0:y1, x0:x1]).mean())


def test_viewers_see_only_the_watched_people_s_faces(site: Site, bootstrap: str, sample_dir: Path) -> None:
    producer = kafka_clients.producer("access-test", bootstrap)
    watched = GalleryEntry("ana", "Ana", EMBEDDER, (_unit(0),), time.time_ns(), ("ana.jpg",), watched=True)
    kafka_clients.send(producer, site.names["gallery"], pack_gallery_entry(watched), key=b"ana")
    now = time.time_ns()
    photo = cv2.resize(cv2.imread(str(sample_dir / "biden.jpg")), (640, 480))
    known, stranger = (40.0, 60.0, 200.0, 260.0), (380.0, 120.0, 560.0, 330.0)  # two regions of the photo
    faces = (Face(known, 0.9, embedding=_unit(0)), Face(stranger, 0.9, embedding=_unit(1)))
    event = DetectionEvent("e1", "gate", 1, now, now, MODEL, 640, 480, faces, embedder=EMBEDDER)
    frame = Frame("gate", 1, now, 640, 480, cv2.imencode(".jpg", photo)[1].tobytes())
    alert = Alert("blur-1", "stranger", "new", "gate", now, now, (Sighting("e1", 1, now, stranger, 0.1),), 1)
    time.sleep(1.0)  # the gallery first, as a deployment has it
    kafka_clients.send(producer, site.names["frames"], pack_frame(frame), key=b"gate")
    kafka_clients.send(producer, site.names["detections"], pack_detection(event), key=b"gate")
    kafka_clients.send(producer, site.names["alerts"], pack_alert(alert), key=b"gate")
    assert producer.flush(10) == 0
    viewer, admin = Client(site.port).sign_in("vic"), Client(site.port).sign_in("ada")

    def image(client: Client, path: str) -> np.ndarray | None:
        status, body = client.call("GET", path)
        return cv2.imdecode(np.frombuffer(body, np.uint8), cv2.IMREAD_COLOR) if status == 200 else None

    wait_until("the frame with its faces", lambda: image(viewer, "/frames/gate/1.jpg") is not None, 30)
    original = cv2.imdecode(np.frombuffer(frame.data, np.uint8), cv2.IMREAD_COLOR)
    for path in ("/frames/gate/1.jpg", "/evidence/blur-1.jpg"):
        seen, shown = image(viewer, path), image(admin, path)
        assert seen is not None and shown is not None, path
        changes = [_changed(picture, original, box) for picture in (seen, shown) for box in (stranger, known)]
        assert changes[0] > 8 and changes[1] < 3, (path, changes)  # the stranger pixelated, the watched face not
        assert changes[2] < 3 and changes[3] < 3, (path, changes)  # the admin sees both
