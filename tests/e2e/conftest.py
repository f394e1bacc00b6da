"""Fixtures of the dashboard's browser tests and of the tests of a three-node cluster's faults."""

from pathlib import Path

import pytest
from helpers.cluster import three_nodes, topics_on
from helpers.dashboard import dashboard_at

from facestream.broker import LocalCluster


@pytest.fixture
def page_on_topics(bootstrap: str, tmp_path: Path):
    """dashboard_at with its settings as they come."""
    with dashboard_at(bootstrap, tmp_path) as dashboard:
        yield dashboard


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory):
    """A three-node cluster, one per module that asks for it."""
    with three_nodes(tmp_path_factory.mktemp("home")) as nodes:
        yield nodes


@pytest.fixture
def cluster_topics(cluster: LocalCluster, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Topics of the test's own on ``cluster``, which every client and child process is pointed at."""
    monkeypatch.setenv("KAFKA_BOOTSTRAP", cluster.bootstrap)
    return topics_on(cluster)
