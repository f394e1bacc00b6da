"""The history beside the live page: the alert store's alerts through a JSON API and a page of its own.

``GET /api/alerts`` takes the filters as query parameters (``camera``, ``kind``, ``state`` and
``alert`` (ids), each repeatable or comma-separated; ``reviewed=yes|no``; ``since`` and ``until`` in Unix milliseconds;
``limit`` up to 200; ``before``, the ``next`` cursor of the page before) and answers
``{"alerts": [...], "next": cursor or null}``, newest first, each alert with its life and whether it
has a snapshot; a stranger's names the recurring stranger its visit belongs to (``stranger``: label
and name) and each stranger's or person_seen's links to its ``journey``. ``POST /api/alerts/review``
with ``{"alert_ids": [...], "comment": "..."}`` marks them reviewed by the signed-in user (the comment,
if any, kept as text). ``GET /snapshots/<alert_id>.jpg`` is the stored snapshot (``?face=1``: cut to
the face or person it shows, for a list's thumbnail); each view is audited.
``GET /api/kinds`` is the contract's table of kinds (``schemas/kinds.py``), the history filter's choices.
Times are milliseconds in JSON, where nanoseconds would lose digits.
"""

import json
from collections.abc import Awaitable, Callable

from sqlalchemy import Engine
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from facestream.alertdb import audit, queries, strangers
from facestream.dashboard.access import audit_entry, caller_of
from facestream.dashboard.crop import face_crop
from facestream.schemas import person_id_for
from facestream.schemas.kinds import ALERT_KINDS

PAGE_MAX = 200
COMMENT_MAX = 2000
MS = 1_000_000


AsSeen = Callable[[Request, str, bytes], Awaitable[bytes]]  # an alert's image as the caller may see it


def routes(engine: Engine, page_html: bytes, as_seen: AsSeen) -> list[Route]:
    async def history(_request: Request) -> Response:
        return Response(page_html, media_type="text/html")

    async def alerts(request: Request) -> Response:
        try:
            where, limit, before = _filters(request)
        except ValueError as exc:
            return PlainTextResponse(str(exc), 400)
        rows, after = await run_in_threadpool(queries.page, engine, where, limit, before)
        ids = [r["alert_id"] for r in rows]
        lives = await run_in_threadpool(queries.lifecycles, engine, ids)
        placed = await run_in_threadpool(strangers.of_alerts, engine, ids)
        return JSONResponse(
            {
                "alerts": [_shown(row, lives[row["alert_id"]], placed.get(row["alert_id"])) for row in rows],
                "next": None if after is None else f"{after[0]}:{after[1]}",
            }
        )

    async def review(request: Request) -> Response:
        try:
            given = json.loads(await request.body())
            alert_ids, comment = given["alert_ids"], given.get("comment")
            if not isinstance(alert_ids, list) or not all(isinstance(a, str) for a in alert_ids):
                raise ValueError
            if comment is not None and (not isinstance(comment, str) or len(comment) > COMMENT_MAX):
                raise ValueError
        except (ValueError, KeyError, TypeError):
            return PlainTextResponse(
                f'expected {{"alert_ids": ["...", ...], "comment": up to {COMMENT_MAX} characters}}', 400
            )
        caller = caller_of(request)
        done = await run_in_threadpool(queries.review, engine, alert_ids, caller.name, comment)
        said = f"alerts {' '.join(alert_ids)}"
        await run_in_threadpool(audit.record, engine, audit_entry(caller, "review", said, done))
        return JSONResponse({"reviewed": done, "by": caller.name})

    async def snapshot(request: Request) -> Response:
        alert_id = request.path_params["alert_id"]
        jpeg, box = await run_in_threadpool(queries.snapshot, engine, alert_id)
        if not jpeg:
            return PlainTextResponse("no snapshot of that alert is kept", 404)
        await run_in_threadpool(audit.record, engine, audit_entry(caller_of(request), "snapshot", f"alert {alert_id}"))
        jpeg = await as_seen(request, alert_id, jpeg)
        if request.query_params.get("face") == "1" and box:
            jpeg = await run_in_threadpool(face_crop, jpeg, box)
        return Response(jpeg, media_type="image/jpeg", headers={"Cache-Control": "private, no-store"})

    async def kinds(_request: Request) -> Response:
        return JSONResponse({"kinds": [kind.fields() for kind in ALERT_KINDS]})

    return [
        Route("/history", history),
        Route("/api/kinds", kinds),
        Route("/api/alerts", alerts),
        Route("/api/alerts/review", review, methods=["POST"]),
        Route("/snapshots/{alert_id}.jpg", snapshot),
    ]


def _filters(request: Request) -> tuple[queries.AlertFilter, int, queries.Cursor | None]:
    """The query's filters, page size and cursor; ValueError with a sentence for a bad one."""
    params = request.query_params

    def listed(name: str) -> tuple[str, ...]:
        return tuple(v for value in params.getlist(name) for v in value.split(",") if v)

    def millis(name: str) -> int | None:
        value = params.get(name)
        if not value:
            return None
        if not value.isdigit():
            raise ValueError(f"{name} is Unix milliseconds, got {value!r}")
        return int(value) * MS

    choice = params.get("reviewed", "")
    if choice not in ("yes", "no", ""):
        raise ValueError("reviewed is yes or no")
    limit = int(params.get("limit", "50")) if params.get("limit", "50").isdigit() else 0
    if not 1 <= limit <= PAGE_MAX:
        raise ValueError(f"limit is 1 to {PAGE_MAX}")
    before = None
    if params.get("before"):
        ns, _, alert_id = params["before"].partition(":")
        if not ns.isdigit() or not alert_id:
            raise ValueError("before is the next cursor of the page before")
        before = (int(ns), alert_id)
    reviewed = None if not choice else choice == "yes"
    where = queries.AlertFilter(
        cameras=listed("camera"),
        kinds=listed("kind"),
        alert_ids=listed("alert"),
        states=listed("state"),
        reviewed=reviewed,
        since_ns=millis("since"),
        until_ns=millis("until"),
    )
    return where, limit, before


def _shown(row: dict, life: list[tuple[str, int]], stranger: tuple[int, str | None] | None) -> dict:
    person = row["evidence"][0].get("person") if row["evidence"] else None
    label = None if stranger is None else strangers.label_of(stranger[0])
    journey = None
    if label is not None:
        journey = f"/api/strangers/{label}/journey"
    elif person is not None:
        journey = f"/api/journey?person={person_id_for(person)}"
    return {
        "alert_id": row["alert_id"],
        "kind": row["kind"],
        "camera_id": row["camera_id"],
        "state": row["state"],
        "count": row["count"],
        "reason": row["reason"],
        "zone": row["zone"],
        "started_ts_ms": row["started_ts_ns"] // MS,
        "updated_ts_ms": row["updated_ts_ns"] // MS,
        "ended_ts_ms": None if row["ended_ts_ns"] is None else row["ended_ts_ns"] // MS,
        "lifecycle": [state for state, _ in life],
        "lifecycle_ts_ms": [ts // MS for _, ts in life],
        "snapshot": row["snapshot"] == "kept",
        "similarity": row["evidence"][0].get("similarity") if row["evidence"] else None,
        "person": person,
        "stranger": None if stranger is None else {"label": label, "name": stranger[1]},
        "journey": journey,
        "reviewed_ts_ms": None if row["reviewed_ts_ns"] is None else row["reviewed_ts_ns"] // MS,
        "reviewed_by": row["reviewed_by"],
        "comment": row["comment"],
    }
