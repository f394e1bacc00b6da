"""The dashboard's settings: search by face is off unless asked for, and never without a token."""

import pytest

from facestream.dashboard.config import DashboardConfig
from facestream.errors import ConfigError


def test_search_is_off_unless_enabled_and_never_without_a_token() -> None:
    assert DashboardConfig().search is False
    with pytest.raises(ConfigError, match="--search needs --token"):
        DashboardConfig(search=True)
    assert DashboardConfig(search=True, token="s3cret").search
