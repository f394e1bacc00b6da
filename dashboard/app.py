"""The dashboard's web app (Starlette): the page and its files, a server-sent-event stream of the
state, the sampled frames and the alerts' evidence frames, the history of the alert store
(``history.py``), teaching the gallery from alerts (``teach.py``), search by face (``search.py``),
recurring strangers (``strangers.py``), and the health endpoints. With a token,
every request but ``/healthz`` and ``/readyz`` must carry it: ``?token=`` (the page's link; it then
sets a cookie), the cookie, or ``Authorization: Bearer``."""

import asyncio
import hmac
import json
from collections import OrderedDict
from importlib import resources

from prometheus_client import CollectorRegistry, Gauge
from sqlalchemy import Engine
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from facestream import health
from facestream.alertdb import queries
from facestream.dashboard import history, search, strangers, teach
from facestream.dashboard.config import DashboardConfig
from facestream.dashboard.state import DashboardState
from facestream.evidence import evidence_jpeg
from facestream.gallery import Gallery
from facestream.schemas import Alert, unpack_alert

PUSH_INTERVAL_S = 0.5  # the page is told of changes at most this often
KEEPALIVE_S = 15.0  # a comment line on a quiet stream, so proxies keep it open
COOKIE = "facestream_token"
OPEN_PATHS = ("/healthz", "/readyz")
EVIDENCE_KEPT = 100  # evidence frames kept once read back


class TokenCheck(BaseHTTPMiddleware):
    """Every request but the health checks carries the token; the token's holder (``NAME:SECRET``, else
    ``operator``) is who reviews alerts."""

    def __init__(self, app, token: str) -> None:
        super().__init__(app)
        self.token, self.name = token, token.rpartition(":")[0] or "operator"

    async def dispatch(self, request: Request, call_next) -> Response:
        if request.url.path in OPEN_PATHS:
            return await call_next(request)
        bearer = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
        given = request.query_params.get("token") or request.cookies.get(COOKIE) or bearer
        if not hmac.compare_digest(given.encode(), self.token.encode()):
            return PlainTextResponse("this dashboard needs its access token: open it as /?token=...", 401)
        request.state.reviewer = self.name
        response = await call_next(request)
        if request.query_params.get("token"):
            response.set_cookie(COOKIE, self.token, httponly=True, samesite="strict")
        return response


def make_app(
    config: DashboardConfig,
    state: DashboardState,
    readiness: health.Readiness,
    registry: CollectorRegistry,
    database: Engine,
    gallery: Gallery,
    embed: teach.Embed | None = None,
) -> Starlette:
    static = resources.files("facestream.dashboard") / "static"
    page = (static / "index.html").read_bytes()
    watchers = Gauge("facestream_dashboard_pages", "Pages open (event streams).", registry=registry)
    evidence: OrderedDict[str, bytes] = OrderedDict()

    async def index(_request: Request) -> Response:
        return Response(page, media_type="text/html")

    def shown() -> dict:
        """The state as the page draws it, with what each alert taught the gallery."""
        return {**state.snapshot(), "taught": teach.lessons(gallery), "search": config.search}

    def find_alert(alert_id: str) -> Alert | None:
        """The alert as the feed has it, else as the alert store last kept it."""
        alert = state.alert(alert_id)
        if alert is None:
            payload = queries.latest_record(database, alert_id)
            alert = unpack_alert(payload) if payload else None
        return alert

    async def stream(request: Request) -> Response:
        async def events():
            watchers.inc()
            try:
                sent, quiet = None, 0.0
                while not await request.is_disconnected():
                    revision = (state.version, gallery.changes)  # either changes what the page shows
                    if revision != sent:
                        sent, quiet = revision, 0.0
                        yield f"data: {json.dumps(shown())}\n\n"
                    elif quiet >= KEEPALIVE_S:
                        quiet = 0.0
                        yield ": keep-alive\n\n"
                    await asyncio.sleep(PUSH_INTERVAL_S)
                    quiet += PUSH_INTERVAL_S
            finally:
                watchers.dec()

        return StreamingResponse(events(), media_type="text/event-stream", headers={"Cache-Control": "no-store"})

    async def snapshot(_request: Request) -> Response:
        return Response(json.dumps(shown()), media_type="application/json")

    async def frame(request: Request) -> Response:
        jpeg = state.frame_jpeg(request.path_params["camera"], request.path_params["seq"])
        if jpeg is None:
            return PlainTextResponse("that frame is no longer kept", 404)
        return Response(jpeg, media_type="image/jpeg", headers={"Cache-Control": "max-age=3600"})

    async def alert_evidence(request: Request) -> Response:
        alert_id = request.path_params["alert_id"]
        if alert_id not in evidence:
            alert = state.alert(alert_id)
            if alert is None:
                return PlainTextResponse("no such alert in the feed", 404)
            jpeg = await run_in_threadpool(evidence_jpeg, alert, config.frames_topics)
            if jpeg is None:
                return PlainTextResponse("the evidence frame is no longer in Kafka", 404)
            evidence[alert_id] = jpeg
            while len(evidence) > EVIDENCE_KEPT:
                evidence.popitem(last=False)
        return Response(evidence[alert_id], media_type="image/jpeg", headers={"Cache-Control": "max-age=3600"})

    routes = [
        Route("/", index),
        Route("/events", stream),
        Route("/api/state", snapshot),
        Route("/frames/{camera}/{seq:int}.jpg", frame),
        Route("/evidence/{alert_id}.jpg", alert_evidence),
        *history.routes(database, (static / "history.html").read_bytes()),
        *teach.routes(config, gallery, find_alert, embed),
        *search.routes(config, database, gallery, find_alert, embed, (static / "search.html").read_bytes()),
        *strangers.routes(config, database, gallery, find_alert, (static / "strangers.html").read_bytes()),
        Mount("/static", StaticFiles(packages=[("facestream.dashboard", "static")])),
        *health.routes(readiness, registry),
    ]
    middleware = [Middleware(TokenCheck, token=config.token)] if config.token else []
    return Starlette(routes=routes, middleware=middleware)
