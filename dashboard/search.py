"""Search by face on the dashboard (``--search``; the role identity): where else was this face?
The page ``/search`` (``static/search.*``; ``/search?alert=ID`` searches by an alert's faces at once,
the live page's "Where else?" on a stranger) and its JSON API:

``POST /api/search`` finds the sightings of a face the alert store keeps (``alert-store --sightings``):
a photo as the body (``?photo=NAME``), or ``?alert=ID`` (the faces of an alert's evidence; ``&face=N``
for one of them), or ``?person=ID`` (an enrolled person's faces). ``since`` (``24h``, ``7d``, Unix
milliseconds; default 24h), ``threshold`` (default 0.5) and ``limit`` narrow it. It answers
``{"audit_id", "sightings", "visits": [...]}``: visits newest first, each a camera's consecutive
sightings with their similarity and ``frame`` (``GET /api/search/frames/<sighting_id>.jpg``: the frame
with the face's box, while the frames topic still holds it). ``POST /api/search/forget`` erases a face:
``?person=ID`` (every sighting alike to their enrolled faces, and their gallery entry) or a photo as the
body. Every search, erasure and frame shown is written to the audit log first (who, when, from where,
what, how many; the admin page shows it). ``GET /api/journey?person=ID`` (or
``?alert=ID``) is the same search with the visits in the order they happened, across cameras, each with
its best sighting: where a person went. Times are milliseconds in JSON.
"""

import hashlib
import logging
import threading
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import Engine
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from facestream import evidence, paths
from facestream.alertdb import audit, queries, sightings
from facestream.alertdb.schema import embedder_name
from facestream.dashboard.access import Caller, Endpoint, audit_entry, caller_of
from facestream.dashboard.config import DashboardConfig
from facestream.dashboard.facesearch import LIMIT, MIN_SIMILARITY, Hit, SightingsIndex, Visit, since_ns, visits
from facestream.dashboard.teach import PHOTO_MAX_BYTES, Embed, FindAlert, change_entry
from facestream.errors import FacestreamError
from facestream.gallery import Gallery

log = logging.getLogger(__name__)
MS = 1_000_000
DEFAULT_SINCE = "24h"
LIMIT_MAX = 10_000


class Refused(Exception):
    """A search that cannot be made, in words for the page, with its HTTP status."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Query:
    """What a request asks about: its kind (audit.KINDS), in words, and the faces to look for."""

    kind: str
    subject: str
    embeddings: list[bytes]
    embedder: str
    person_id: str | None = None  # an enrolled person's


def index_folder(engine: Engine) -> Path:
    """Where the index of this database's sightings is kept between runs (``$FACESTREAM_HOME``)."""
    database = engine.url.render_as_string(hide_password=True)
    return paths.home() / "search-index" / hashlib.sha256(database.encode()).hexdigest()[:16]


def routes(
    config: DashboardConfig,
    engine: Engine,
    gallery: Gallery,
    find_alert: FindAlert,
    embed: Embed | None,
    page_html: bytes,
) -> list[Route]:
    if not config.search:
        return _routes(_off, _off, _off, _off, _off)
    index = SightingsIndex(engine, index_folder(engine))
    threading.Thread(target=index.keep_up, name="search-index", daemon=True).start()

    def query_of(request: Request, body: bytes) -> Query:
        params = request.query_params
        if "alert" in params:
            alert = find_alert(params["alert"])
            if alert is None:
                raise Refused("no such alert in the feed or the alert store", 404)
            faces, embedder = evidence.evidence_faces(alert, config.detections_topic)
            embeddings = [face.embedding for face in faces if face.embedding is not None]
            if "face" in params:
                chosen = int(params["face"])
                embeddings = embeddings[chosen : chosen + 1]
            if not embeddings or embedder is None:
                raise Refused("this alert's faces are no longer in Kafka, or carry no embeddings", 409)
            face_said = f" face {params['face']}" if "face" in params else ""
            return Query("alert", f"alert {alert.alert_id}{face_said}", embeddings, embedder_name(embedder))
        if "person" in params:
            entry = gallery.entry(params["person"])
            if entry is None:
                raise Refused("no such person in the gallery", 404)
            subject = f"person {entry.person_id} ({entry.name})"
            return Query("person", subject, list(entry.embeddings), embedder_name(entry.embedder), entry.person_id)
        if embed is None:
            raise Refused("this dashboard cannot embed photos (run it as `facestream dashboard`)", 501)
        if not body or len(body) > PHOTO_MAX_BYTES:
            raise Refused(f"send a photo as the body (up to {PHOTO_MAX_BYTES >> 20} MB), or ?alert= or ?person=")
        try:
            embeddings, embedder = embed([(params.get("photo", "photo.jpg"), body)])
        except (ValueError, FacestreamError) as exc:
            raise Refused(str(exc), 409) from None
        subject = f"photo sha256 {hashlib.sha256(body).hexdigest()[:16]}"
        return Query("photo", subject, embeddings, embedder_name(embedder))

    def search(query: Query, caller: Caller, start: int, threshold: float, limit: int) -> dict:
        hits = index.find(query.embeddings, query.embedder, threshold, start, limit)
        said = audit_entry(caller, query.kind, query.subject, len(hits), since_ts_ns=start, min_similarity=threshold)
        audit_id = audit.record(engine, said)
        log.info("search %d by %s: %s: %d sightings", audit_id, caller.name, query.subject, len(hits))
        return {"audit_id": audit_id, "sightings": len(hits), "visits": [_visit(v) for v in visits(hits)]}

    def forget(query: Query, caller: Caller, threshold: float) -> dict:
        """Erase a face from every place facestream keeps it, and say what went from each."""
        forgotten = index.forget(query.embeddings, query.embedder, threshold)
        removed = {"sightings": forgotten, "gallery_entry": 0, "alerts": 0, "snapshots": 0}
        if query.person_id is not None:
            entry = gallery.entry(query.person_id)
            change_entry(config.gallery_topic, gallery, None, query.person_id)
            removed["gallery_entry"] = 1
            if entry is not None:
                removed["alerts"], removed["snapshots"] = queries.forget_person(engine, entry.name)
        said = ", ".join(f"{n} {place}" for place, n in removed.items())
        audit_id = audit.record(
            engine, audit_entry(caller, "forget", f"{query.subject}: {said}", forgotten, min_similarity=threshold)
        )
        log.info("erasure %d by %s: %s: %s", audit_id, caller.name, query.subject, said)
        return {
            "audit_id": audit_id,
            "forgotten": forgotten,
            "gallery_entry_removed": bool(removed["gallery_entry"]),
            "removed": removed,
            "in_kafka": "frames and detection events still in Kafka go with the topics' retention (/api/retention)",
        }

    async def find(request: Request) -> Response:
        try:
            params = request.query_params
            threshold = float(params.get("threshold", MIN_SIMILARITY))
            limit = int(params.get("limit", LIMIT))
            if not 0.0 < threshold <= 1.0 or not 0 < limit <= LIMIT_MAX:
                raise Refused(f"threshold must be in (0, 1] and limit in 1..{LIMIT_MAX}")
            start = since_ns(params.get("since", DEFAULT_SINCE))
            query = await run_in_threadpool(query_of, request, await request.body())
            found = await run_in_threadpool(search, query, caller_of(request), start, threshold, limit)
        except ValueError as exc:
            return PlainTextResponse(str(exc), 400)
        except Refused as exc:
            return PlainTextResponse(str(exc), exc.status)
        return JSONResponse(found)

    async def journey(request: Request) -> Response:
        """A person's (or an alert's faces') visits across cameras in the order they happened."""
        try:
            if "person" not in request.query_params and "alert" not in request.query_params:
                raise Refused("a journey is of ?person=ID or ?alert=ID (a stranger's: /api/strangers/LABEL/journey)")
            start = since_ns(request.query_params.get("since", DEFAULT_SINCE))
            query = await run_in_threadpool(query_of, request, b"")
            found = await run_in_threadpool(search, query, caller_of(request), start, MIN_SIMILARITY, LIMIT)
        except ValueError as exc:
            return PlainTextResponse(str(exc), 400)
        except Refused as exc:
            return PlainTextResponse(str(exc), exc.status)
        found["visits"].sort(key=lambda visit: (visit["first_ms"], visit["camera_id"]))
        return JSONResponse({"subject": query.subject, **found})

    async def erase(request: Request) -> Response:
        try:
            threshold = float(request.query_params.get("threshold", MIN_SIMILARITY))
            query = await run_in_threadpool(query_of, request, await request.body())
            if query.kind == "alert":
                raise Refused("erase by person or by photo: an alert's faces may be anyone's")
            return JSONResponse(await run_in_threadpool(forget, query, caller_of(request), threshold))
        except ValueError as exc:
            return PlainTextResponse(str(exc), 400)
        except Refused as exc:
            return PlainTextResponse(str(exc), exc.status)

    async def frame(request: Request) -> Response:
        sighting_id = request.path_params["sighting_id"]
        seen = (await run_in_threadpool(sightings.seen, engine, [sighting_id])).get(sighting_id)
        if seen is None:
            return PlainTextResponse("no such sighting is kept", 404)
        jpeg = await run_in_threadpool(
            evidence.boxed_frame, config.frames_topics, seen.camera_id, seen.frame_seq, seen.capture_ts_ns, seen.box
        )
        if jpeg is None:
            return PlainTextResponse("that frame is no longer in Kafka", 404)
        said = audit_entry(caller_of(request), "frame", f"sighting {sighting_id} (camera {seen.camera_id})")
        await run_in_threadpool(audit.record, engine, said)
        return Response(jpeg, media_type="image/jpeg", headers={"Cache-Control": "private, no-store"})

    async def page(_request: Request) -> Response:
        return Response(page_html, media_type="text/html")

    return _routes(page, find, erase, frame, journey)


def _routes(page: Endpoint, find: Endpoint, erase: Endpoint, frame: Endpoint, journey: Endpoint) -> list[Route]:
    """The search's routes, served by these endpoints (the same paths when search is off)."""
    return [
        Route("/search", page),
        Route("/api/search", find, methods=["POST"]),
        Route("/api/search/forget", erase, methods=["POST"]),
        Route("/api/search/frames/{sighting_id:int}.jpg", frame),
        Route("/api/journey", journey),
    ]


async def _off(_request: Request) -> Response:
    return PlainTextResponse("search by face is off: start the dashboard with --search", 404)


def _visit(visit: Visit) -> dict:
    return {
        "camera_id": visit.camera_id,
        "first_ms": visit.first_ts_ns // MS,
        "last_ms": visit.last_ts_ns // MS,
        "best_similarity": round(visit.best.similarity, 4),
        "best": _sighting(visit.best),
        "sightings": [_sighting(hit) for hit in visit.hits],
    }


def _sighting(hit: Hit) -> dict:
    seen = hit.sighting
    return {
        "sighting_id": seen.sighting_id,
        "ms": seen.capture_ts_ns // MS,
        "camera_id": seen.camera_id,
        "frame_seq": seen.frame_seq,
        "box": list(seen.box),
        "score": seen.score,
        "similarity": round(hit.similarity, 4),
        "event_id": seen.event_id,
        "face": seen.face,
        "frame": f"/api/search/frames/{seen.sighting_id}.jpg",
    }
