"""The dashboard's web app (Starlette): the page and its files, a server-sent-event stream of the
state, the sampled frames and the alerts' evidence frames, the history of the alert store
(``history.py``), teaching the gallery from alerts (``teach.py``), search by face (``search.py``),
recurring strangers (``strangers.py``), signing in (``login.py``), the admin page (``admin.py``) and
the health endpoints. Every route needs the role ``access.ROUTES`` gives it; every face shown is audited.
"""

import asyncio
import json
from collections import OrderedDict
from importlib import resources

from prometheus_client import CollectorRegistry, Gauge
from sqlalchemy import Engine
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from facestream import health
from facestream.alertdb import audit, queries
from facestream.dashboard import admin, history, login, search, strangers, teach
from facestream.dashboard.access import Access, audit_entry, caller_of, guard
from facestream.dashboard.blur import Blur
from facestream.dashboard.clips import alert_clip as alert_clip_of
from facestream.dashboard.config import DashboardConfig
from facestream.dashboard.pixelate import Box, pixelated_jpeg
from facestream.dashboard.state import DashboardState
from facestream.evidence import evidence_jpeg, find_event
from facestream.gallery import Gallery
from facestream.schemas import Alert, unpack_alert

PUSH_INTERVAL_S = 0.5  # the page is told of changes at most this often
KEEPALIVE_S = 15.0  # a comment line on a quiet stream, so proxies keep it open
EVIDENCE_KEPT = 100  # evidence frames kept once read back
CLIPS_KEPT = 20  # alerts' clips kept once made (a few MB)
UNCACHED = {"Cache-Control": "private, no-store"}  # a face is shown only as asked for: each view audited


def kept_in_kafka(config: DashboardConfig) -> dict[str, tuple[str, ...]]:
    """Each kind of data in Kafka and its topics, for the admin page's retention."""
    return {
        "frames": config.frames_topics,
        "detection events (embeddings)": (config.detections_topic,),
        "poses": (config.poses_topic,),
        "alerts": (config.alerts_topic,),
    }


def make_app(
    config: DashboardConfig,
    state: DashboardState,
    readiness: health.Readiness,
    registry: CollectorRegistry,
    database: Engine,
    gallery: Gallery,
    embed: teach.Embed | None = None,
    throttle: login.Throttle | None = None,
) -> Starlette:
    access = Access(database, config.trusted_proxies_list, config.user_header)
    static = resources.files("facestream.dashboard") / "static"
    page = (static / "index.html").read_bytes()
    watchers = Gauge("facestream_dashboard_pages", "Pages open (event streams).", registry=registry)
    evidence: OrderedDict[str, bytes] = OrderedDict()
    clips: OrderedDict[tuple[str, bool], bytes] = OrderedDict()
    hidden_faces: OrderedDict[str, list[Box]] = OrderedDict()  # by alert: what a viewer may not see
    blur = Blur(gallery, config.watch_threshold) if config.blur_unwatched else None

    async def index(_request: Request) -> Response:
        return Response(page, media_type="text/html")

    async def no_icon(_request: Request) -> Response:
        return Response(status_code=204)  # what a browser asks for beside a plain-text answer

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
        await run_in_threadpool(
            audit.record, database, audit_entry(caller_of(request), "live", "live tiles", len(state.cameras))
        )

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

    def hides(request: Request) -> bool:
        """Whether this caller sees only the watched people's faces (``--blur-unwatched``)."""
        return blur is not None and caller_of(request).user.role == "viewer"

    def evidence_hidden(alert: Alert) -> list[Box]:
        """The faces of the alert's evidence frame a viewer may not see: by its detection event, else
        (gone from Kafka) the alert's own boxes unless they are a watched person's."""
        assert blur is not None
        if alert.alert_id not in hidden_faces:
            first = alert.evidence[0] if alert.evidence else None
            event = first and find_event(config.detections_topic, alert.camera_id, first.frame_seq, first.capture_ts_ns)
            if event:
                hidden_faces[alert.alert_id] = blur.hidden(event.faces, event.embedder)
            else:
                hidden_faces[alert.alert_id] = (
                    [] if alert.kind == "person_seen" else [s.box for s in alert.evidence if s.box]
                )
            while len(hidden_faces) > EVIDENCE_KEPT:
                hidden_faces.popitem(last=False)
        return hidden_faces[alert.alert_id]

    async def as_seen(request: Request, alert_id: str, jpeg: bytes) -> bytes:
        """An alert's evidence (or snapshot) as this caller may see it."""
        if not hides(request):
            return jpeg
        alert = await run_in_threadpool(find_alert, alert_id)
        boxes = await run_in_threadpool(evidence_hidden, alert) if alert else []
        return await run_in_threadpool(pixelated_jpeg, jpeg, boxes)

    async def frame(request: Request) -> Response:
        kept = state.kept_frame(request.path_params["camera"], request.path_params["seq"])
        if kept is None:
            return PlainTextResponse("that frame is no longer kept", 404)
        jpeg = kept.jpeg
        if hides(request):
            assert blur is not None
            if "faces" not in kept.found:
                return PlainTextResponse("that frame's faces are not known yet", 404)  # the page shows found ones
            jpeg = await run_in_threadpool(pixelated_jpeg, jpeg, blur.hidden(kept.faces, kept.embedder))
        return Response(jpeg, media_type="image/jpeg", headers={"Cache-Control": "private, max-age=3600"})

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
        await run_in_threadpool(
            audit.record, database, audit_entry(caller_of(request), "evidence", f"alert {alert_id}")
        )
        return Response(await as_seen(request, alert_id, evidence[alert_id]), media_type="image/jpeg", headers=UNCACHED)

    async def alert_clip(request: Request) -> Response:
        """The alert's frames as an MP4 (``clips.py``), made on first request and kept for the next."""
        alert_id = request.path_params["alert_id"]
        hide = blur.hidden if blur is not None and hides(request) else None
        key = (alert_id, hide is not None)  # a viewer's clip is made apart
        if key not in clips:
            alert = await run_in_threadpool(find_alert, alert_id)
            if alert is None:
                return PlainTextResponse("no such alert in the feed or the alert store", 404)
            made = await run_in_threadpool(alert_clip_of, alert, config.frames_topics, config.detections_topic, hide)
            if made is None:
                return PlainTextResponse("the frames of this alert are no longer in Kafka", 404)
            clips[key] = made
            while len(clips) > CLIPS_KEPT:
                clips.popitem(last=False)
        if request.headers.get("range", "bytes=0-").startswith("bytes=0-"):  # a player's later ranges: one look
            said = audit_entry(caller_of(request), "clip", f"alert {alert_id}")
            await run_in_threadpool(audit.record, database, said)
        return Response(clips[key], media_type="video/mp4", headers=UNCACHED)

    routes = [
        Route("/", index),
        Route("/favicon.ico", no_icon),
        Route("/events", stream),
        Route("/api/state", snapshot),
        Route("/frames/{camera}/{seq:int}.jpg", frame),
        Route("/evidence/{alert_id}.jpg", alert_evidence),
        Route("/clips/{alert_id}.mp4", alert_clip),
        *login.routes(access, (static / "login.html").read_bytes(), throttle),
        *admin.routes(database, (static / "admin.html").read_bytes(), kept_in_kafka(config)),
        *history.routes(database, (static / "history.html").read_bytes(), as_seen),
        *teach.routes(config, database, gallery, find_alert, embed),
        *search.routes(config, database, gallery, find_alert, embed, (static / "search.html").read_bytes()),
        *strangers.routes(config, database, gallery, find_alert, (static / "strangers.html").read_bytes()),
        Mount("/static", StaticFiles(packages=[("facestream.dashboard", "static")])),
        *health.routes(readiness, registry),
    ]
    return Starlette(routes=guard(routes, access))
