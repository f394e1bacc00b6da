"""Signed-in HTTP clients of a running dashboard, as a browser or a script is (see ``pythonpath`` in
pyproject): a session cookie and its CSRF token, or an API token."""

import json
import urllib.error
import urllib.request
from http.cookiejar import CookieJar

from facestream.alertdb import accounts, open_database

PASSWORD = "correct-horse-battery"  # every test account's
DASHBOARD_ADMIN = "ana"  # the admin of tests/e2e/conftest.py's dashboard


def make_users(database: str, roles: dict[str, str]) -> None:
    """Accounts name -> role in the dashboard's database, each with ``PASSWORD``."""
    engine = open_database(database)
    for name, role in roles.items():
        accounts.add(engine, name, role, PASSWORD)


class Client:
    """One user's requests to the dashboard on ``port`` (of ``host``): cookies kept, the CSRF token sent
    on changes."""

    def __init__(self, port: int, token: str = "", host: str = "127.0.0.1") -> None:
        self.base = f"http://{host}:{port}"
        self.jar = CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar), _NoRedirect)
        self.csrf = ""
        self.token = token

    def sign_in(self, name: str, password: str = PASSWORD) -> "Client":
        status, body = self.call("POST", "/login", {"name": name, "password": password})
        assert status == 200, (status, body)
        self.csrf = json.loads(self.call("GET", "/api/me")[1])["csrf"]
        return self

    def call(
        self, method: str, path: str, body: dict | bytes | None = None, headers: dict | None = None, read: bool = True
    ) -> tuple[int, bytes]:
        """(status, body) of one request; a dict body goes as JSON; ``read=False``: the status alone
        (of a stream that never ends)."""
        sent = {"Origin": self.base, **(headers or {})}
        if isinstance(body, dict):
            body, sent["Content-Type"] = json.dumps(body).encode(), "application/json"
        if method != "GET" and self.csrf:
            sent.setdefault("X-CSRF-Token", self.csrf)
        if self.token:
            sent["Authorization"] = f"Bearer {self.token}"
        request = urllib.request.Request(self.base + path, data=body, method=method, headers=sent)
        try:
            with self.opener.open(request, timeout=30) as response:
                return response.status, response.read() if read else b""
        except urllib.error.HTTPError as error:
            return error.code, error.read()

    def cookie(self) -> str:
        return next((c.value for c in self.jar if c.name == "facestream_session"), "")


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirect is an answer to look at, not to follow."""

    def redirect_request(self, *_args, **_kwargs):
        return None


def api_token(database: str, name: str) -> str:
    """A new API token of ``name`` (for requests a script makes)."""
    return accounts.new_token(open_database(database), name)


def sign_in_page(page, port: int, name: str, then: str = "", password: str = PASSWORD) -> None:
    """Sign ``page`` (a Selenium driver) in through the sign-in form, and wait until it has left it
    for ``then`` (a page of the dashboard: "", "history", ...)."""
    from helpers.browser import wait_until

    page.get(f"http://127.0.0.1:{port}/login" + (f"?next={then}" if then else ""))
    page.find_element("name", "name").send_keys(name)
    page.find_element("name", "password").send_keys(password)
    page.find_element("css selector", "#signin button").click()
    wait_until(f"{name} signed in", lambda: "/login" not in page.current_url, 20)
