"""Shared fixtures. Anything that talks to Kafka uses the real broker that
``facestream kafka start`` runs (or the one KAFKA_BOOTSTRAP names): no fakes."""

import contextlib
import fcntl
import json
import os
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import pytest
from helpers import browser, compose, kube, programs, prometheus, turns
from helpers.kafka import make_topics

from facestream import kafka_clients, samples

TESTS = Path(__file__).parent
# The real parts a test needs, known from its fixtures: the markers `make test-fast` leaves out.
NEEDS_BY_FIXTURE = {"bootstrap": "kafka", "postgres": "postgres", "rtsp_cameras": "rtsp"}
# ... or from what its module uses: a browser, containers, Prometheus.
NEEDS_BY_HELPER = {
    "browser": (browser.chromium,),
    "compose": (compose.Stack, kube.Play),
    "prometheus": (prometheus.check_metrics, prometheus.prometheus),
}


# The markers of the real parts: a test with none of them is in `make test-fast`'s tier (or its slow
# tests) and may start none of their programs (helpers/programs.py).
REAL_PARTS = {"kafka", "e2e", "browser", "compose", "postgres", "rtsp", "gpu", "helm", "prometheus"}
GUARD = programs.Guard(REAL_PARTS)
NO_TURN = pytest.StashKey[str]()
TURN = turns.Held()  # this worker's turn on the machine


# Tests that start several JVMs or a stack of containers: under pytest-xdist each runs alone on the
# machine (helpers/turns.py), as do tests marked ``alone``. `make test` hands out whole files
# (--dist loadfile), so a module's fixtures, e.g. a three-node cluster, start once, on one worker.
HEAVY_FILES = {"tests/e2e/test_cluster.py"}


def pytest_collection_modifyitems(config, items: list) -> None:
    """Mark every test by what it needs (pyproject.toml registers the markers): the end-to-end
    folder, its fixtures, the helpers its module uses, a GPU module's name, PyTorch imported."""
    _FILE_ORDER.clear()
    for item in items:
        parts = item.path.relative_to(TESTS).parts
        needs = {mark for fixture, mark in NEEDS_BY_FIXTURE.items() if fixture in item.fixturenames}
        module = vars(item.module) if item.module is not None else {}
        needs |= {
            mark for mark, helpers in NEEDS_BY_HELPER.items() if any(v is h for v in module.values() for h in helpers)
        }
        if parts[0] == "e2e":
            needs.add("e2e")
        if getattr(item, "callspec", None) and item.callspec.params.get("database_url") == "postgresql":
            needs.add("postgres")  # database_url starts the server only for this parameter
        if item.path.stem.endswith("_gpu"):
            needs.add("gpu")
        if getattr(module.get("torch"), "__name__", None) == "torch":
            needs.add("torch")
        for mark in sorted(needs):
            item.add_marker(getattr(pytest.mark, mark))
        if "compose" in needs or f"tests/{'/'.join(parts)}" in HEAVY_FILES:
            item.add_marker(pytest.mark.alone)
        order = 0 if item.get_closest_marker("alone") else 1 if needs & (REAL_PARTS | {"torch"}) else 2
        _FILE_ORDER[item.path] = min(order, _FILE_ORDER.get(item.path, 2))
    items.sort(key=_turn_order)


def _turn_order(item) -> tuple[int, int]:
    """Files with a test that runs alone first, then those with real parts or PyTorch, then the rest;
    in a file, its alone tests first, else in their order. An alone test waits until the tests beside
    it are done, with its workers idle meanwhile: run back to back at the start, the alone tests wait
    for each other only, not for a drain each (an alone test after a file's others would wait for one
    in the middle of the run); the short unit tests last even out the workers' ends. (`make test`
    hands out whole files, in this order: --dist loadfile.)"""
    return _FILE_ORDER.get(item.path, 2), 0 if item.get_closest_marker("alone") else 1


_FILE_ORDER: dict = {}


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    """The test's turn on the machine (under pytest-xdist), taken before pytest-timeout starts the
    test's clock; then the test is held to the programs its markers declare, set-up to teardown."""
    with contextlib.ExitStack() as stack:
        if "PYTEST_XDIST_WORKER" in os.environ:
            shared = item.config._tmp_path_factory.getbasetemp().parent  # every worker's base is made in it
            alone = item.get_closest_marker("alone") is not None
            try:
                TURN.take(shared, alone, item.nodeid)
            except turns.TurnTimeout as exc:
                item.stash[NO_TURN] = str(exc)  # failed at set-up by machine_turn, as a test failure
            if not (alone and _alone_in(nextitem, item.path)):  # else kept: the file's fixtures run on
                stack.callback(TURN.release)
        GUARD.enter(item.nodeid, {mark.name for mark in item.iter_markers()})
        stack.callback(GUARD.leave)
        return (yield)


def _alone_in(item, path: Path) -> bool:
    """Whether ``item`` is an alone test of the file at ``path``."""
    return item is not None and item.path == path and item.get_closest_marker("alone") is not None


@pytest.fixture(autouse=True)
def machine_turn(request) -> None:
    """A test that got no turn on the machine fails, saying for whom it waited."""
    if NO_TURN in request.node.stash:
        pytest.fail(request.node.stash[NO_TURN], pytrace=False)


@pytest.fixture(scope="session")
def bootstrap() -> str:
    """Start the project's own broker (idempotent) and return its address. pytest-xdist's workers
    take turns: two starting it at once would both find it stopped."""
    with open(Path(tempfile.gettempdir()) / "facestream-test-broker.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        subprocess.run([sys.executable, "-m", "facestream", "kafka", "start"], check=True)
    kafka_clients.check_reachable()
    return kafka_clients.bootstrap_servers()


@pytest.fixture
def topics(bootstrap: str) -> dict[str, str]:
    """Fresh topic and group names per test, so tests never see each other's records."""
    tag = uuid.uuid4().hex[:10]
    names = {"frames": f"t-{tag}.frames", "detections": f"t-{tag}.detections", "dlq": f"t-{tag}.dlq"}
    make_topics(names, bootstrap)
    return {**names, "group": f"t-{tag}.detector"}


@pytest.fixture(scope="session")
def yunet_path() -> Path:
    from facestream.detector_service.models import resolve

    return resolve("yunet")


@pytest.fixture(scope="session")
def sample_dir() -> Path:
    return samples.fetch()


@pytest.fixture
def rtsp_cameras(sample_dir: Path):
    """``rtsp_cameras(*server options)`` starts a real RTSP camera streaming vtest.avi (1280x720 H.264 at
    25 fps unless told) on a port of its own; every camera started is killed after the test."""
    from helpers.http import free_port
    from helpers.rtsp import RtspCamera

    started: list[RtspCamera] = []

    def start(*args: str) -> RtspCamera:
        camera = RtspCamera(sample_dir / "vtest.avi", free_port(), *args).start()
        started.append(camera)
        return camera

    yield start
    for camera in started:
        camera.kill()


@pytest.fixture(scope="session")
def postgres():
    """A real PostgreSQL server for the session; ``postgres.database()`` makes a fresh database's URL."""
    from bench.postgres import PostgresServer

    server = PostgresServer().start()
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request, tmp_path: Path) -> str:
    """An empty alert database on each engine the store supports: a SQLite file, a PostgreSQL database."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'alerts.db'}"
    return request.getfixturevalue("postgres").database()


@pytest.fixture
def produce_raw(bootstrap: str):
    """Publish raw bytes (valid or not) to a topic, bypassing the schema: what a buggy producer sends."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "message.max.bytes": 16 * 1024 * 1024})

    def send(topic: str, key: bytes, value: bytes) -> None:
        producer.produce(topic, key=key, value=value)

    yield send
    assert producer.flush(30) == 0


def pytest_configure(config) -> None:
    """Hold each test to the programs it declares; name the file the fault tests append their reports
    to (pytest-xdist's workers inherit it)."""
    from helpers.fault import REPORTS_ENV

    sys.addaudithook(GUARD)
    if not hasattr(config, "workerinput"):  # the controller, or a run without workers
        folder = Path(tempfile.mkdtemp(prefix="facestream-reports-"))
        os.environ[REPORTS_ENV] = str(folder / "fault-reports.jsonl")


def pytest_terminal_summary(terminalreporter) -> None:
    """The fault tests' figures (produced / answered / lost / duplicates / measured times), as a table."""
    from helpers.fault import REPORTS_ENV

    reports = Path(os.environ.get(REPORTS_ENV, "/nonexistent"))
    if reports.exists():
        terminalreporter.section("fault reports")
        for line in reports.read_text().splitlines():
            terminalreporter.write_line(" | ".join(f"{k} {v}" for k, v in json.loads(line).items()))
