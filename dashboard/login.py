"""Signing in and out of the dashboard, and what a signed-in page asks about itself.

``POST /login`` takes ``{"name", "password"}`` as JSON (a cross-site form cannot send that) and answers
with the session cookie: HttpOnly, SameSite=Strict, Secure under TLS. Failed attempts are limited per
name and per address (``Throttle``); each one is logged and audited. ``POST /logout`` ends the session
in the database, so a copied cookie is worthless afterwards. ``GET /api/me`` gives the page its user,
role, CSRF token and the pages of its menu; ``POST /api/me/token`` makes the caller a new API token.
"""

import json
import logging
import re
import threading
import time
from collections import defaultdict, deque

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from facestream.alertdb import accounts, audit
from facestream.dashboard.access import COOKIE, Access, audit_entry, caller_of, pages_for, same_origin

log = logging.getLogger(__name__)
NEXT = re.compile(r"[a-z]*(\?[^\\/:]*)?")  # a page of this dashboard, relative: never another site


class Throttle:
    """Failed sign-ins per name and per address in the last ``window_s``: past either limit, the
    next attempt is refused unchecked until the oldest failure leaves the window."""

    def __init__(self, per_name: int = 5, per_address: int = 20, window_s: float = 900.0) -> None:
        self.limits = {"name": per_name, "address": per_address}
        self.window_s = window_s
        self.failures: dict[tuple[str, str], deque[float]] = defaultdict(deque)
        self.lock = threading.Lock()

    def wait_s(self, name: str, address: str, now: float | None = None) -> float:
        """Seconds until an attempt for ``name`` from ``address`` may be checked (0: now)."""
        now = time.monotonic() if now is None else now
        wait = 0.0
        with self.lock:
            for key in (("name", name), ("address", address)):
                times = self.failures[key]
                while times and now - times[0] > self.window_s:
                    times.popleft()
                if len(times) >= self.limits[key[0]]:
                    wait = max(wait, self.window_s - (now - times[0]))
        return wait

    def failed(self, name: str, address: str, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        with self.lock:
            self.failures["name", name].append(now)
            self.failures["address", address].append(now)


def routes(access: Access, page_html: bytes, throttle: Throttle | None = None) -> list[Route]:
    engine, throttle = access.engine, throttle or Throttle()

    async def page(_request: Request) -> Response:
        return Response(page_html, media_type="text/html")

    def refuse(name: str, address: str, why: str, status: int, headers: dict | None = None) -> Response:
        log.warning("sign-in refused for %r from %s: %s", name, address, why)
        audit.record(engine, audit.AuditEntry(name[:64] or "?", "login-refused", why, 0, address=address))
        return PlainTextResponse(f"sign-in refused: {why}", status, headers=headers)

    def sign_in(request: Request, body: bytes) -> Response:
        address = access.address(request)
        if not same_origin(request) or request.headers.get("content-type", "").split(";")[0] != "application/json":
            return refuse("?", address, "not from this dashboard's sign-in page", 403)
        try:
            given = json.loads(body)
            name, password, after = str(given["name"]), str(given["password"]), str(given.get("next", ""))
        except (ValueError, KeyError, TypeError):
            return PlainTextResponse('expected {"name": "...", "password": "..."} as JSON', 400)
        wait = throttle.wait_s(name, address)
        if wait > 0:
            return refuse(name, address, "too many failed attempts", 429, {"Retry-After": str(int(wait) + 1)})
        user = accounts.by_password(engine, name, password)
        if user is None:
            throttle.failed(name, address)
            return refuse(name, address, "wrong name or password, or the account is disabled", 401)
        cookie, _csrf = accounts.start_session(engine, user, address)
        audit.record(engine, audit.AuditEntry(user.name, "login", f"session from {address}", 1, address=address))
        log.info("%s signed in from %s", user.name, address)
        answer = JSONResponse({"name": user.name, "role": user.role, "next": after if NEXT.fullmatch(after) else ""})
        answer.set_cookie(COOKIE, cookie, httponly=True, samesite="strict", secure=access.https(request), path="/")
        return answer

    async def login(request: Request) -> Response:
        return await run_in_threadpool(sign_in, request, await request.body())

    async def logout(request: Request) -> Response:
        caller = caller_of(request)
        if caller.cookie:
            await run_in_threadpool(accounts.end_session, engine, caller.cookie)
        await run_in_threadpool(audit.record, engine, audit_entry(caller, "logout", f"session via {caller.via}"))
        answer = JSONResponse({"signed_out": caller.name})
        answer.delete_cookie(COOKIE, path="/")
        return answer

    async def me(request: Request) -> Response:
        caller = caller_of(request)
        user = caller.user
        return JSONResponse(
            {"name": user.name, "role": user.role, "via": caller.via, "csrf": caller.csrf, "pages": pages_for(user)}
        )

    async def token(request: Request) -> Response:
        caller = caller_of(request)
        made = await run_in_threadpool(accounts.new_token, engine, caller.name)
        await run_in_threadpool(audit.record, engine, audit_entry(caller, "token", f"new API token of {caller.name}"))
        return JSONResponse({"token": made, "use": "Authorization: Bearer <token>"})

    return [
        Route("/login", page),
        Route("/login", login, methods=["POST"]),
        Route("/logout", logout, methods=["POST"]),
        Route("/api/me", me),
        Route("/api/me/token", token, methods=["POST"]),
    ]
