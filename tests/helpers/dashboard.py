"""A dashboard on a test's own topics of the real broker, signed in as its admin (see ``pythonpath`` in
pyproject)."""

import subprocess
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from facestream import kafka_topics
from facestream.dashboard.config import dashboard_command
from helpers.accounts import DASHBOARD_ADMIN, api_token, make_users
from helpers.browser import wait_until
from helpers.http import free_port, get
from helpers.worker import dashboard_on


@contextmanager
def dashboard_at(bootstrap: str, tmp_path: Path, **changes) -> Iterator[tuple]:
    """A dashboard on fresh topics and its own SQLite store, with one admin (DASHBOARD_ADMIN), its
    settings changed by ``changes``: yields the topics' names, its port, its log, its database URL,
    and the admin's API token as headers."""
    tag = uuid.uuid4().hex[:10]
    names = {part: f"d-{tag}.{part}" for part in ("frames", "detections", "poses", "alerts", "status", "gallery")}
    kafka_topics.ensure_topics(dict.fromkeys(names.values(), 2), bootstrap)
    port, database = free_port(), f"sqlite:///{tmp_path / 'alerts.db'}"
    make_users(database, {DASHBOARD_ADMIN: "admin"})
    config = dashboard_on(
        names,
        port,
        database,
        zones={"gate": {"door": [[0, 0], [0.5, 0], [0.5, 1], [0, 1]], "drive": [[0.5, 0.5], [1, 0.5], [1, 1]]}},
        lines={"gate": {"entrance": [[0.5, 0], [0.5, 1]]}},
        **changes,
    )
    log = tmp_path / "dashboard.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(dashboard_command(config), stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_until("the dashboard ready", lambda: get(port, "/readyz")[0] == 200, 60)
        yield names, port, log, config.database, {"Authorization": f"Bearer {api_token(database, DASHBOARD_ADMIN)}"}
    finally:
        proc.terminate()
        assert proc.wait(timeout=30) == 0, log.read_text()[-3000:]
