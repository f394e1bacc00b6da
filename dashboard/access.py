"""Who may use which route of the dashboard: one table (``ROUTES``) gives every page and API route the
least role it needs, and docs/dashboard.md's table is generated from it. ``guard`` wraps every route
of the app with its check and refuses to build an app with a route the table does not name, so a new
route cannot ship open by mistake.

A request is someone's by one of three ways: the session cookie set at sign-in, ``Authorization:
Bearer`` with the user's API token (scripts), or, from a trusted proxy's address only, the header in
which an identity-aware proxy names the user (who must have an account: the role is ours). A request
that changes something, by cookie or proxy, must carry the session's CSRF token in ``X-CSRF-Token``
and, if the browser says where it comes from (``Origin``), come from this page.
"""

import hmac
import ipaddress
import logging
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from urllib.parse import quote

from sqlalchemy import Engine
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route

from facestream.alertdb import accounts, audit
from facestream.alertdb.accounts import User
from facestream.errors import ConfigError

log = logging.getLogger(__name__)
PUBLIC = "public"  # anyone, signed in or not
SIGNED_IN = "viewer"  # the least role: any account
COOKIE = "facestream_session"
CSRF_HEADER = "x-csrf-token"
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")

# "METHOD path" -> (the least role, what it gives). Roles: accounts.ROLES, each with the rights of those
# before it; PUBLIC needs no account. Pages are the GET routes that serve HTML (PAGES, in the menu order).
ROUTES: dict[str, tuple[str, str]] = {
    "GET /login": (PUBLIC, "the sign-in page"),
    "POST /login": (PUBLIC, "sign in: name and password (limited per name and address)"),
    "GET /healthz": (PUBLIC, "liveness"),
    "GET /readyz": (PUBLIC, "readiness: the topics' partitions assigned"),
    "GET /static/*": (PUBLIC, "the pages' scripts and style (no data)"),
    "GET /favicon.ico": (PUBLIC, "no icon (204)"),
    "POST /logout": ("viewer", "sign out: the session ends"),
    "GET /api/me": ("viewer", "who is signed in, their role, the pages they may open"),
    "POST /api/me/token": ("viewer", "a new API token of one's own, shown once"),
    "GET /metrics": ("viewer", "Prometheus metrics (scrape with an API token)"),
    "GET /": ("viewer", "the live page: tiles, alerts, consumer groups"),
    "GET /events": ("viewer", "the live state, streamed (one audit record per page opened)"),
    "GET /api/state": ("viewer", "the live state"),
    "GET /frames/{camera}/{seq:int}.jpg": ("viewer", "a camera's latest sampled frame"),
    "GET /evidence/{alert_id}.jpg": ("viewer", "an alert's evidence frame (audited)"),
    "GET /clips/{alert_id}.mp4": ("viewer", "an alert's frames as a clip, its faces boxed (audited)"),
    "GET /history": ("viewer", "the history page"),
    "GET /api/kinds": ("viewer", "the kinds of alert: name, title, what count means (schemas/kinds.py)"),
    "GET /api/alerts": ("viewer", "the alert store's alerts, filtered and paged"),
    "GET /snapshots/{alert_id}.jpg": ("viewer", "an alert's stored snapshot (audited)"),
    "POST /api/alerts/review": ("reviewer", "mark alerts reviewed, with a comment (audited)"),
    "POST /api/gallery/enrol": ("identity", "enrol a person from a photo (audited)"),
    "POST /api/alerts/{alert_id}/teach": ("identity", "this alert's faces are NAME (audited)"),
    "POST /api/alerts/{alert_id}/not-person": ("identity", "this alert's faces are not the person named (audited)"),
    "POST /api/alerts/{alert_id}/undo": ("identity", "take back what an alert taught (audited)"),
    "GET /search": ("identity", "the search-by-face page"),
    "POST /api/search": ("identity", "search the sightings by photo, alert or person (audited)"),
    "POST /api/search/forget": ("identity", "erase a person's or a photo's face (audited)"),
    "GET /api/search/frames/{sighting_id:int}.jpg": ("identity", "a sighting's frame, its face boxed (audited)"),
    "GET /api/journey": ("identity", "a person's visits across cameras in order (audited)"),
    "GET /strangers": ("identity", "the recurring strangers page"),
    "GET /api/strangers": ("identity", "the recurring strangers"),
    "GET /api/strangers/{label}/journey": ("identity", "a stranger's visits (audited)"),
    "POST /api/strangers/{label}/name": ("identity", "name a stranger: their faces enrolled (audited)"),
    "POST /api/strangers/{label}/split": ("identity", "a visit is someone else (audited)"),
    "GET /admin": ("admin", "the admin page: users, audit log, retention"),
    "GET /api/users": ("admin", "the accounts"),
    "POST /api/users": ("admin", "add an account (audited)"),
    "POST /api/users/{name}": ("admin", "change an account's role, access or password (audited)"),
    "GET /api/audit": ("admin", "the audit log, as JSON or CSV (?format=csv)"),
    "GET /api/retention": ("admin", "how long each kind of data is kept, where, and what the last pass removed"),
}
PAGES = ("/", "/history", "/search", "/strangers", "/admin")


@dataclass(frozen=True)
class Caller:
    """Who is asking, from where, and how they proved it."""

    user: User
    address: str
    via: str  # session, token or proxy
    csrf: str | None = None  # what a state-changing request must carry (none by token)
    cookie: str | None = None

    @property
    def name(self) -> str:
        return self.user.name


def role_of(method: str, path: str) -> str:
    """The role a route needs; KeyError for one the table does not name."""
    return ROUTES[f"{'GET' if method == 'HEAD' else method} {path}"][0]


def pages_for(user: User) -> list[str]:
    """The pages ``user`` may open, in the menu's order."""
    return [page for page in PAGES if user.may(role_of("GET", page))]


def audit_entry(caller: Caller, kind: str, subject: str, results: int = 1, **more) -> audit.AuditEntry:
    """An audit record of what ``caller`` did or saw."""
    return audit.AuditEntry(caller.name, kind, subject, results, address=caller.address, **more)


def caller_of(request: Request) -> Caller:
    """The caller ``guard`` identified (routes that need an account only)."""
    return request.state.caller


class Access:
    """How requests are identified: the accounts' database, and the proxies trusted to name the user."""

    def __init__(self, engine: Engine, trusted_proxies: tuple[str, ...] = (), user_header: str = "") -> None:
        self.engine = engine
        try:
            self.proxies = [ipaddress.ip_network(p.strip(), strict=False) for p in trusted_proxies if p.strip()]
        except ValueError as exc:
            raise ConfigError(f"--trusted-proxies takes addresses or networks: {exc}") from None
        self.user_header = user_header.lower()
        self.secret = secrets.token_bytes(32)  # keys the CSRF tokens of proxy-named users

    def trusted(self, host: str | None) -> bool:
        try:
            return host is not None and any(ipaddress.ip_address(host) in net for net in self.proxies)
        except ValueError:
            return False

    def address(self, request: Request) -> str:
        """The client's address: behind a trusted proxy, the nearest untrusted hop of X-Forwarded-For."""
        host = request.client.host if request.client else "?"
        if self.trusted(host):
            hops = [h.strip() for h in request.headers.get("x-forwarded-for", "").split(",") if h.strip()]
            while hops and self.trusted(hops[-1]):
                hops.pop()
            if hops:
                return hops[-1][:64]
        return host

    def https(self, request: Request) -> bool:
        forwarded = self.trusted(request.client.host if request.client else None) and request.headers.get(
            "x-forwarded-proto", ""
        ).startswith("https")
        return request.url.scheme == "https" or forwarded

    def identify(self, request: Request) -> Caller | None:
        """The caller, by proxy header (from a trusted address), API token or session cookie; else None."""
        address = self.address(request)
        host = request.client.host if request.client else None
        if self.user_header and self.trusted(host) and self.user_header in request.headers:
            user = accounts.named(self.engine, request.headers[self.user_header])
            if user is None or user.disabled:
                return None
            csrf = hmac.new(self.secret, user.name.encode(), "sha256").hexdigest()
            return Caller(user, address, "proxy", csrf)
        bearer = request.headers.get("authorization", "")
        if bearer.startswith("Bearer "):
            user = accounts.by_token(self.engine, bearer.removeprefix("Bearer ").strip())
            return None if user is None else Caller(user, address, "token")
        cookie = request.cookies.get(COOKIE)
        if cookie:
            found = accounts.session(self.engine, cookie)
            if found is not None:
                return Caller(found.user, address, "session", found.csrf, cookie)
        return None


def same_origin(request: Request) -> bool:
    """False when the browser says the request comes from another site's page."""
    origin = request.headers.get("origin")
    if origin is None:
        return request.headers.get("sec-fetch-site", "same-origin") in ("same-origin", "none")
    return origin == f"{request.url.scheme}://{request.headers.get('host', '')}" or _forwarded(request, origin)


def _forwarded(request: Request, origin: str) -> bool:
    """The origin a TLS-terminating proxy's browser sees: https:// and the same host."""
    return origin == f"https://{request.headers.get('host', '')}"


Endpoint = Callable[[Request], Awaitable[Response]]


def _checked(endpoint: Endpoint, roles: dict[str, str], access: Access) -> Endpoint:
    async def check(request: Request) -> Response:
        role = roles["GET" if request.method == "HEAD" else request.method]
        if role == PUBLIC:
            return await endpoint(request)
        caller = await run_in_threadpool(access.identify, request)
        if caller is None:
            if request.method == "GET" and request.url.path in PAGES:
                return RedirectResponse(_login_link(request), 303)
            return PlainTextResponse("sign in first (POST /login), or send Authorization: Bearer <API token>", 401)
        if not caller.user.may(role):
            log.warning(
                "%s (%s) was refused %s %s: needs %s",
                caller.name,
                caller.user.role,
                request.method,
                request.url.path,
                role,
            )
            return PlainTextResponse(f"this needs the role {role}; {caller.name} is {caller.user.role}", 403)
        if request.method not in SAFE_METHODS and caller.via != "token":
            given = request.headers.get(CSRF_HEADER, "")
            if not same_origin(request) or not caller.csrf or not hmac.compare_digest(given, caller.csrf):
                log.warning(
                    "refused a %s %s of %s from %s without this page's CSRF token",
                    request.method,
                    request.url.path,
                    caller.name,
                    caller.address,
                )
                return PlainTextResponse("refused: a change must come from this dashboard's own page", 403)
        request.state.caller = caller
        return await endpoint(request)

    return check


def _login_link(request: Request) -> str:
    """``login?next=<this page>``, relative, so that it holds under a proxy's path prefix."""
    page = request.url.path.lstrip("/") + (f"?{request.url.query}" if request.url.query else "")
    return "login" + (f"?next={quote(page, safe='')}" if page else "")


def guard(routes: list[BaseRoute], access: Access) -> list[BaseRoute]:
    """``routes``, each wrapped in the check its ``ROUTES`` rows give; ConfigError naming any route (or
    method) the table does not have, and any row no route serves."""
    guarded: list[BaseRoute] = []
    missing, served = [], set()
    for route in routes:
        if isinstance(route, Mount):
            key = f"GET {route.path}/*"
            if ROUTES.get(key, ("", ""))[0] != PUBLIC:
                raise ConfigError(f"{key}: a mount of files is served only as a public route of ROUTES")
            served.add(key)
            guarded.append(route)
            continue
        assert isinstance(route, Route)
        methods = sorted((route.methods or {"GET"}) - {"HEAD"})
        keys = {method: f"{method} {route.path}" for method in methods}
        missing += [key for key in keys.values() if key not in ROUTES]
        served.update(keys.values())
        if not missing:
            roles = {method: ROUTES[key][0] for method, key in keys.items()}
            guarded.append(Route(route.path, _checked(route.endpoint, roles, access), methods=methods, name=route.name))
    if missing:
        raise ConfigError(f"route(s) with no role in dashboard/access.py's ROUTES: {', '.join(missing)}")
    unserved = sorted(set(ROUTES) - served)
    if unserved:
        raise ConfigError(f"ROUTES names route(s) the dashboard does not serve: {', '.join(unserved)}")
    return guarded


def roles_table() -> str:
    """``ROUTES`` as the Markdown table docs/dashboard.md shows (``python -m bench.report`` writes it)."""
    rows = ["| route | least role | what it gives |", "|---|---|---|"]
    order = {role: n for n, role in enumerate((PUBLIC, *accounts.ROLES))}
    for key, (role, what) in sorted(ROUTES.items(), key=lambda item: (order[item[1][0]], item[0].split(" ")[1])):
        rows.append(f"| `{key}` | {role} | {what} |")
    return "\n".join(rows)
