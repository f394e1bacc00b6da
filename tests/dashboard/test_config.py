"""The dashboard's settings and its table of roles: search by face is off unless asked for, only a
trusted proxy may name the user, and a route the table does not name stops the app from being built."""

import pytest
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from facestream.alertdb import open_database
from facestream.dashboard.access import PAGES, ROUTES, Access, guard
from facestream.dashboard.config import DashboardConfig
from facestream.dashboard.login import Throttle
from facestream.errors import ConfigError


def test_search_is_off_unless_enabled() -> None:
    assert DashboardConfig().search is False
    assert DashboardConfig(search=True).search


def test_only_a_trusted_proxy_may_name_the_user() -> None:
    with pytest.raises(ConfigError, match="--user-header needs --trusted-proxies"):
        DashboardConfig(user_header="Remote-User")
    config = DashboardConfig(user_header="Remote-User", trusted_proxies="127.0.0.1, 10.0.0.0/8")
    assert config.trusted_proxies_list == ("127.0.0.1", "10.0.0.0/8")


async def _endpoint(_request) -> PlainTextResponse:
    return PlainTextResponse("")


def test_a_route_without_a_role_stops_the_app(tmp_path) -> None:
    access = Access(open_database(f"sqlite:///{tmp_path / 'a.db'}"))
    every = [Route(key.split(" ", 1)[1], _endpoint, methods=[key.split(" ")[0]]) for key in ROUTES if "/*" not in key]
    with pytest.raises(ConfigError, match=r"no role in dashboard/access.py's ROUTES: GET /api/secret"):
        guard([*every, Route("/api/secret", _endpoint)], access)
    with pytest.raises(ConfigError, match="does not serve: GET /api/me"):
        guard([r for r in every if r.path != "/api/me"], access)


def test_every_role_and_page_in_the_table_is_known() -> None:
    assert {role for role, _ in ROUTES.values()} == {"public", "viewer", "reviewer", "identity", "admin"}
    assert all(f"GET {page}" in ROUTES for page in PAGES)


def test_failed_sign_ins_are_limited_per_name_and_per_address() -> None:
    throttle = Throttle(per_name=3, per_address=5, window_s=60)
    for _ in range(3):
        throttle.failed("ana", "10.0.0.1", now=0)
    assert throttle.wait_s("ana", "10.0.0.2", now=1) == pytest.approx(59)  # the name, from anywhere
    assert throttle.wait_s("bo", "10.0.0.1", now=1) == 0  # the address still has two
    throttle.failed("bo", "10.0.0.1", now=2), throttle.failed("cy", "10.0.0.1", now=2)
    assert throttle.wait_s("dee", "10.0.0.1", now=3) > 0  # five from one address: any name
    assert throttle.wait_s("ana", "10.0.0.2", now=61) == 0  # the window has passed
