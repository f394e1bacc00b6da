"""Recurring strangers on the dashboard: the page ``/strangers`` (``static/strangers.*``) and its JSON API,
over the visits the alert store groups (``facestream.alertdb.strangers``).

``GET /api/strangers`` lists them, the latest seen first: label (``unknown-17``), name once given, how
many visits, on which cameras, first and last seen, and a face (its latest visit's snapshot, cut to
the face). ``GET /api/strangers/<label>/journey`` is one stranger's visits in the order they
happened, across cameras: each its alert, camera, first and last seen and face.
``POST /api/strangers/<label>/name`` with ``{"name": "..."}`` says who the stranger is: it names every
visit and enrols the good faces of each (as teaching from an alert does; a visit whose faces Kafka no
longer holds is said so and skipped).
``POST /api/strangers/<label>/split?alert=ID`` says that visit is not this person: it becomes a
stranger of its own. Every journey shown and every change is written to the audit log.
"""

import logging
from collections.abc import Callable

from sqlalchemy import Engine
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from facestream.alertdb import audit, strangers
from facestream.alertdb.strangers import Stranger, VisitRow
from facestream.dashboard.access import Caller, audit_entry, caller_of
from facestream.dashboard.config import DashboardConfig
from facestream.dashboard.teach import NAME_EXPECTED, FindAlert, Refused, name_in, teach_alert
from facestream.gallery import Gallery
from facestream.schemas import person_id_for

log = logging.getLogger(__name__)
MS = 1_000_000
LIST_MAX = 500


def routes(
    config: DashboardConfig, engine: Engine, gallery: Gallery, find_alert: FindAlert, page_html: bytes
) -> list[Route]:
    async def page(_request: Request) -> Response:
        return Response(page_html, media_type="text/html")

    async def listing(request: Request) -> Response:
        limit = request.query_params.get("limit", "100")
        if not limit.isdigit() or not 1 <= int(limit) <= LIST_MAX:
            return PlainTextResponse(f"limit is 1 to {LIST_MAX}", 400)
        found = await run_in_threadpool(strangers.listed, engine, int(limit))
        return JSONResponse({"strangers": [summary(s) for s in found]})

    def stranger_of(request: Request) -> Stranger:
        stranger_id = strangers.id_of(request.path_params["label"])
        found = None if stranger_id is None else strangers.one(engine, stranger_id)
        if found is None:
            raise LookupError("no such stranger (labels look like unknown-17)")
        return found

    def journey(request: Request, caller: Caller) -> dict:
        stranger = stranger_of(request)
        audit.record(engine, audit_entry(caller, "journey", f"stranger {stranger.label}", len(stranger.visits)))
        return {**summary(stranger), "visits": [_visit(v) for v in stranger.visits]}

    def name(request: Request, person: str, caller: Caller) -> dict:
        stranger = stranger_of(request)
        taught, refused = 0, []
        for visit in stranger.visits:
            alert = find_alert(visit.alert_id)
            try:
                if alert is None:
                    raise Refused("the alert store no longer has this alert")
                teach_alert(config, gallery, alert, person, caller.name)
                taught += 1
            except (Refused, ValueError) as exc:
                refused.append({"alert_id": visit.alert_id, "why": str(exc)})
        strangers.name(engine, stranger.stranger_id, person)
        audit.record(engine, audit_entry(caller, "name", f"stranger {stranger.label} is {person}", taught))
        log.info(
            "%s named %s %s: %d of %d visits enrolled",
            caller.name,
            stranger.label,
            person,
            taught,
            len(stranger.visits),
        )
        return {
            "label": stranger.label,
            "name": person,
            "person_id": person_id_for(person),
            "taught": taught,
            "refused": refused,
        }

    def split(request: Request, caller: Caller) -> dict:
        stranger = stranger_of(request)
        alert_id = request.query_params.get("alert", "")
        if alert_id not in {v.alert_id for v in stranger.visits}:
            raise LookupError(f"{stranger.label} has no visit of alert {alert_id!r}")
        new_id = strangers.split(engine, alert_id)
        if new_id is None:  # split by someone else a moment ago
            raise LookupError(f"the visit of alert {alert_id!r} was just moved")
        label = strangers.label_of(new_id)
        audit.record(engine, audit_entry(caller, "split", f"alert {alert_id} from {stranger.label} to {label}"))
        log.info("%s split alert %s off %s: now %s", caller.name, alert_id, stranger.label, label)
        return {"from": stranger.label, "label": label}

    def answer(action: Callable[..., dict], needs_name: bool = False) -> Callable:
        async def handle(request: Request) -> Response:
            args: list = []
            if needs_name:
                person = name_in(await request.body())
                if person is None:
                    return PlainTextResponse(NAME_EXPECTED, 400)
                args.append(person)
            try:
                return JSONResponse(await run_in_threadpool(action, request, *args, caller_of(request)))
            except LookupError as exc:
                return PlainTextResponse(str(exc), 404)

        return handle

    return [
        Route("/strangers", page),
        Route("/api/strangers", listing),
        Route("/api/strangers/{label}/journey", answer(journey)),
        Route("/api/strangers/{label}/name", answer(name, needs_name=True), methods=["POST"]),
        Route("/api/strangers/{label}/split", answer(split), methods=["POST"]),
    ]


def summary(stranger: Stranger) -> dict:
    visits = stranger.visits
    return {
        "label": stranger.label,
        "name": stranger.name,
        "visits": len(visits),
        "cameras": stranger.cameras,
        "first_ms": min((v.started_ts_ns for v in visits), default=0) // MS,
        "last_ms": max((v.updated_ts_ns for v in visits), default=0) // MS,
        "journey": f"/api/strangers/{stranger.label}/journey",
        "face": _face(visits[-1].alert_id) if visits else None,
    }


def _visit(visit: VisitRow) -> dict:
    return {
        "alert_id": visit.alert_id,
        "camera_id": visit.camera_id,
        "first_ms": visit.started_ts_ns // MS,
        "last_ms": visit.updated_ts_ns // MS,
        "face": _face(visit.alert_id),
    }


def _face(alert_id: str) -> str:
    """The face in the snapshot of visit ``alert_id``: the snapshot cut to it."""
    return f"/snapshots/{alert_id}.jpg?face=1"
