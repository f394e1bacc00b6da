"""The admin page's API: the accounts (list, add, change role, disable, reset a password), the audit
log (read, filtered, exported as CSV or JSON; nothing here changes or deletes a record) and the
retention of each kind of data (the alert store's passes as it recorded them, the topics' as the
brokers apply it). Every change to an account is itself audited, and ends the account's sessions."""

import json
import logging

from sqlalchemy import Engine
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from facestream import kafka_topics
from facestream.alertdb import accounts, audit, retention
from facestream.dashboard.access import audit_entry, caller_of
from facestream.errors import ConfigError, FacestreamError

log = logging.getLogger(__name__)
MS = 1_000_000
AUDIT_MAX = 10_000


def routes(engine: Engine, page_html: bytes, topics: dict[str, tuple[str, ...]]) -> list[Route]:
    """``topics``: what each kind in Kafka is kept in (frames, detection events, ...), for retention."""

    async def page(_request: Request) -> Response:
        return Response(page_html, media_type="text/html")

    async def users(_request: Request) -> Response:
        found = await run_in_threadpool(accounts.listed, engine)
        return JSONResponse({"users": [_user(user) for user in found]})

    def added(request: Request, given: dict) -> dict:
        name, role = str(given.get("name", "")), str(given.get("role", ""))
        password = str(given.get("password") or accounts.new_password())
        user = accounts.add(engine, name, role, password)
        audit.record(engine, audit_entry(caller_of(request), "user", f"add {name} as {role}"))
        return {**_user(user), **({} if given.get("password") else {"password": password})}

    def changed(request: Request, given: dict) -> dict:
        name = request.path_params["name"]
        values: dict = {}
        if "role" in given:
            values["role"] = str(given["role"])
        if "disabled" in given:
            values["disabled"] = bool(given["disabled"])
        made = accounts.new_password() if given.get("reset_password") else None
        if made:
            values["password"] = made
        if not values:
            raise ConfigError('expected {"role": ...}, {"disabled": true|false} or {"reset_password": true}')
        if name == caller_of(request).name and (values.get("disabled") or values.get("role", "admin") != "admin"):
            raise ConfigError("an admin cannot disable or demote themselves here (ask another, or use the CLI)")
        user = accounts.change(engine, name, **values)
        said = ", ".join(f"{k}={'(new)' if k == 'password' else v}" for k, v in values.items())
        audit.record(engine, audit_entry(caller_of(request), "user", f"change {name}: {said}"))
        return {**_user(user), **({"password": made} if made else {})}

    def answer(action):
        async def handle(request: Request) -> Response:
            try:
                given = json.loads(await request.body() or b"{}")
                if not isinstance(given, dict):
                    raise ValueError
            except ValueError:
                return PlainTextResponse("expected a JSON object", 400)
            try:
                return JSONResponse(await run_in_threadpool(action, request, given))
            except ConfigError as exc:
                return PlainTextResponse(str(exc), 409)

        return handle

    async def audit_log(request: Request) -> Response:
        params = request.query_params
        try:
            limit = min(int(params.get("limit", 200)), AUDIT_MAX)
            before = int(params["before"]) if params.get("before") else None
        except ValueError:
            return PlainTextResponse("limit and before are numbers", 400)
        found = await run_in_threadpool(audit.entries, engine, limit, before, params.get("who"), params.get("kind"))
        if params.get("format") == "csv":
            headers = {"Content-Disposition": 'attachment; filename="facestream-audit.csv"'}
            return Response(audit.as_csv(found), media_type="text/csv", headers=headers)
        headers = (
            {"Content-Disposition": 'attachment; filename="facestream-audit.json"'} if params.get("format") else {}
        )
        return JSONResponse({"entries": [audit_row(e) for e in found]}, headers=headers)

    def kept() -> dict:
        try:
            days = kafka_topics.retention_days([t for names in topics.values() for t in names])
        except FacestreamError as exc:
            days = {}
            log.warning("cannot read the topics' retention: %s", exc)
        in_kafka = [
            {"kind": kind, "place": topic, "days": _days(days.get(topic, "unknown")), "applied_by": "Kafka"}
            for kind, names in topics.items()
            for topic in names
        ]
        in_database = [
            {
                "kind": row.kind,
                "place": row.place,
                "days": row.days,
                "applied_by": row.applied_by,
                "applied_ms": row.applied_ts_ns // MS,
                "removed": row.removed,
                "removed_total": row.removed_total,
            }
            for row in retention.listed(engine)
        ]
        return {"kafka": in_kafka, "database": in_database}

    async def retention_of(_request: Request) -> Response:
        return JSONResponse(await run_in_threadpool(kept))

    return [
        Route("/admin", page),
        Route("/api/retention", retention_of),
        Route("/api/users", users),
        Route("/api/users", answer(added), methods=["POST"]),
        Route("/api/users/{name}", answer(changed), methods=["POST"]),
        Route("/api/audit", audit_log),
    ]


def _days(value: float | str) -> float | str | None:
    """Days as JSON has them: None for forever, a sentence where unknown."""
    return None if value == float("inf") else value


def _user(user: accounts.User) -> dict:
    return {"name": user.name, "role": user.role, "disabled": user.disabled, "api_token": user.has_token}


def audit_row(record: audit.AuditEntry) -> dict:
    return {
        "audit_id": record.audit_id,
        "at_ms": record.at_ts_ns // MS,
        "who": record.who,
        "address": record.address,
        "kind": record.kind,
        "subject": record.subject,
        "since_ms": None if record.since_ts_ns is None else record.since_ts_ns // MS,
        "min_similarity": record.min_similarity,
        "results": record.results,
    }
