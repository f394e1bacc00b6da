"""The main job a new user runs (`make demo` runs `facestream demo`), on the test broker, and its
dashboard as they see it: in a real headless Chromium."""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers.accounts import Client, sign_in_page
from helpers.browser import DESK, PAGES, at_size, chromium, console_errors, count, images_loaded, look_at, wait_until
from helpers.http import free_port, get
from helpers.receiver import Webhook

# A folder for the pictures of every page on a phone and at a desk, besides the test's own folder
# (`make screenshots` draws docs/images/ so); without it, the live page's alone.
SCREENSHOTS = os.environ.get("FACESTREAM_SCREENSHOTS")


@pytest.mark.alone  # bounds on time: six services and a browser
def test_demo_streams_real_photos_and_prints_events_and_shows_them_live(
    bootstrap: str, yunet_path, sample_dir, tmp_path: Path
) -> None:
    port, phone = free_port(), Webhook().start()  # --notify: the demo's alerts to a webhook
    out, err = tmp_path / "demo.out", tmp_path / "demo.err"
    with open(out, "wb") as stdout_file, open(err, "wb") as stderr_file:  # files: the page test may take a while
        demo = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "facestream",
                "demo",
                "--duration",
                "0",  # until Ctrl-C: the page may take its time
                "--fps",
                "2",
                "--dashboard-port",
                str(port),
                "--notify",
                phone.url,
            ],
            stdout=stdout_file,
            stderr=stderr_file,
            preexec_fn=ignore_sigint,  # as a shell starts a background job: Ctrl-C must stop it all the same
        )
    try:
        wait_until("the dashboard ready", lambda: get(port, "/readyz")[0] == 200, 90)
        # The demo made its admin account and printed how to sign in.
        said = re.search(r"dashboard: (http://\S+) .* sign in as demo with the password (\S+);", err.read_text())
        assert said and said[1] == f"http://127.0.0.1:{port}/", err.read_text()
        with chromium() as page:
            sign_in_page(page, port, "demo", password=said[2])
            wait_until("three camera tiles", lambda: count(page, ".tile") == 3, 30)
            wait_until(
                "faces boxed on both face cameras",
                lambda: (
                    count(page, ".tile[data-camera=portraits] rect.face") >= 1
                    and count(page, ".tile[data-camera=annotated] rect.face") >= 1
                ),
                30,
            )
            wait_until(
                "a skeleton on the corridor", lambda: count(page, ".tile[data-camera=corridor] line.bone") >= 4, 30
            )
            wait_until(
                "a stranger alert", lambda: count(page, ".alert[data-kind=stranger][data-camera=portraits]") >= 1, 40
            )
            wait_until(
                "the stranger's evidence frame", lambda: images_loaded(page, ".alert[data-kind=stranger] img") >= 1, 20
            )
            assert count(page, ".alert[data-kind=stranger] a.search-face") >= 1  # "Where else?"
            watched = ".alert[data-kind=person_seen][data-camera=portraits]"
            wait_until("the watched person seen", lambda: count(page, watched) >= 1, 40)
            assert "Barack Obama" in page.find_element("css selector", f"{watched} .kind").get_attribute("textContent")
            assert count(page, ".tile[data-camera=annotated] polygon.zone[data-zone=room]") == 1
            wait_until(
                "the detector's group with its member",
                lambda: "facestream-demo" in page.find_element("id", "groups").text,
                20,
            )
            # A tile's next frame may be loading at any moment (on a loaded machine, most of the time):
            # each tile must have shown a frame, not necessarily all three at one moment.
            shown: set[str] = set()

            def every_tile_showed_a_frame() -> bool:
                shown.update(tiles_showing_a_frame(page))
                return len(shown) == 3

            wait_until(
                "a frame on every tile", every_tile_showed_a_frame, 30, lambda: f"tiles that did: {sorted(shown)}"
            )
            assert "live" in page.find_element("id", "status").text
            settled(Client(port).sign_in("demo", said[2]), within_s=20)  # frames queued while warming up, worked off
            page.save_screenshot(str(tmp_path / "dashboard.png"))
            if SCREENSHOTS:
                every_page_drawn(page, port, Path(SCREENSHOTS))
            assert [e for e in console_errors(page) if not evicted_frame(e)] == []
            page.get(f"http://127.0.0.1:{port}/history")  # the alert store kept it, with its snapshot
            wait_until("the stranger in the history with its snapshot", lambda: in_history(page, "portraits"), 90)
            assert console_errors(page) == []
        wait_until(
            "a stranger and a fall alert printed",
            lambda: printed_alerts(out, ("portraits", "stranger"), ("portraits", "person_seen"), ("corridor", "fall")),
            60,
        )
        wait_until("a stranger notified", lambda: any(p["title"] == "Stranger at portraits" for p in phone.posts), 60)
        # A little after the first stranger alert, the demo asks where else that face was.
        wait_until("the stranger's visits printed", lambda: "sighting(s) in" in out.read_text(), 60)
        demo.send_signal(signal.SIGINT)  # Ctrl-C
        demo.wait(timeout=120)
    finally:
        phone.stop()
        if demo.poll() is None:
            demo.kill()
            demo.wait()
    stdout, stderr = out.read_text(), err.read_text()
    assert demo.returncode == 0, stderr[-3000:]
    lines = [line for line in stdout.splitlines() if "face(s)" in line]
    assert len(lines) >= 10, stdout
    assert any(line.startswith("portraits") for line in lines) and any(line.startswith("annotated") for line in lines)
    assert "0 face(s)" not in stdout  # every sample photo holds a face
    assert "events (portraits)" in stderr and "Kafka keeps running" in stderr
    assert f"dashboard: http://127.0.0.1:{port}/" in stderr
    # Obama is enrolled, Biden is not: the portraits camera shows a stranger (a new alert on a fresh
    # broker; the demo's alerting group keeps its state, so a run after another may continue it).
    # The corridor's player topples and lies on the floor: the pose service and the fall rule say so.
    assert printed_alerts(out, ("portraits", "stranger"), ("corridor", "fall")), stdout[-3000:]
    assert not printed_alerts(out, ("annotated", "stranger"))  # the crowd rule only there
    said = stdout.splitlines()
    found = next(i for i, line in enumerate(said) if line.startswith("SEARCH") and "visit(s)" in line)
    assert said[found + 1].split()[0] == "portraits", stdout[-3000:]  # the stranger's visit, on their camera


def ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def tiles_showing_a_frame(page) -> list[str]:
    """The cameras whose tile shows a loaded frame now."""
    script = (
        "return [...document.querySelectorAll('.tile')]"
        ".filter(t => { const i = t.querySelector('img'); return i && i.complete && i.naturalWidth > 0; })"
        ".map(t => t.dataset.camera)"
    )
    return page.execute_script(script)


def in_history(page, camera: str) -> bool:
    """Whether the history, loaded afresh, shows a stranger alert of ``camera`` with its snapshot."""
    page.refresh()
    time.sleep(1.0)
    shown = f"#history .alert[data-kind=stranger][data-camera={camera}]"
    return count(page, shown) >= 1 and images_loaded(page, f"{shown} img") >= 1


def printed_alerts(out: Path, *wanted: tuple[str, str]) -> bool:
    """Whether the demo printed an alert of each (camera, kind)."""
    alerts = {tuple(line.split()[1:3]) for line in out.read_text().splitlines() if line.startswith("ALERT")}
    return all(pair in alerts for pair in wanted)


def settled(client: Client, within_s: float) -> bool:
    """Whether every camera's latency fell under a second within ``within_s`` (no failure if not:
    this only times the screenshot)."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        cameras = json.loads(client.call("GET", "/api/state")[1]).get("cameras", [])
        if cameras and all((c["latency_max_ms"] or 0) < 1000 for c in cameras):
            return True
        time.sleep(1)
    return False


def test_a_demo_whose_dashboard_cannot_start_says_why(bootstrap: str, yunet_path, sample_dir) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "facestream", "demo", "--duration", "60", "--dashboard-port", str(port)],
            capture_output=True,
            text=True,
            timeout=180,
        )
    assert done.returncode == 1
    assert "the dashboard exited with code 2" in done.stderr and "is the port taken?" in done.stderr, done.stderr


def every_page_drawn(page, port: int, folder: Path) -> None:
    """Each page of the running demo at both sizes into ``folder`` (NAME-phone.png, NAME-desk.png, the
    live page at a desk also as dashboard.png, the README's picture), laid out without a fault."""
    folder.mkdir(parents=True, exist_ok=True)
    base = f"http://127.0.0.1:{port}/"
    problems = {name: look_at(page, base + path, name, folder) for name, path in PAGES.items()}
    problems["login"] = look_at(page, base + "login", "login", folder)
    at_size(page, DESK)
    page.get(base)
    wait_until("a frame on every tile again", lambda: len(tiles_showing_a_frame(page)) == 3, 30)
    page.save_screenshot(str(folder / "dashboard.png"))
    assert all(not found for sizes in problems.values() for found in sizes.values()), problems


def evicted_frame(error: str) -> bool:
    """A tile's frame the dashboard no longer kept when the browser asked for it (a loaded machine: the
    next frames came first): a 404 by design, and the tile shows the next one."""
    return "/frames/" in error and "404 (Not Found)" in error
