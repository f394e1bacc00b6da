"""Fixtures of the dashboard's browser tests."""

from pathlib import Path

import pytest
from helpers.dashboard import dashboard_at


@pytest.fixture
def page_on_topics(bootstrap: str, tmp_path: Path):
    """dashboard_at with its settings as they come."""
    with dashboard_at(bootstrap, tmp_path) as dashboard:
        yield dashboard
