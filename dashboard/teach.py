"""Teaching the gallery from the page, where people see the recogniser err.

``POST /api/alerts/<id>/teach`` with ``{"name": "..."}`` says the faces of an alert (a stranger's) are
that person: they are enrolled, as a new person or as more faces of one. ``POST .../not-person`` says
the faces of a ``person_seen`` alert are not the person it names: they become that person's negatives,
and the stranger rule sees such a face as a stranger from then on. ``POST .../undo`` takes out
whatever an alert taught. ``POST /api/gallery/enrol?name=...&photo=...`` with a photo as the body
enrols its face (given an ``embed`` function: the dashboard's command runs the detector's own models on
its CPU for it). The faces' embeddings of an alert come from its detection events, read back from
Kafka (nothing is recomputed); every change goes through the gallery's compacted topic, as
``facestream gallery enroll`` does, so every alerting worker follows it. They need the role identity;
who taught what is logged and audited.
"""

import json
import logging
from collections.abc import Callable

from sqlalchemy import Engine
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from facestream import evidence, face_quality
from facestream.alertdb import audit
from facestream.dashboard.access import audit_entry, caller_of
from facestream.dashboard.config import DashboardConfig
from facestream.errors import FacestreamError
from facestream.gallery import Gallery, alert_of, not_them, publish, taught, with_faces
from facestream.gallery import undo as undo_lessons
from facestream.schemas import Alert, GalleryEntry, ModelRef, SchemaError, pack_gallery_entry, person_id_for

log = logging.getLogger(__name__)
FindAlert = Callable[[str], Alert | None]  # the feed's alert, else the alert store's
# (photo name, its bytes) pairs -> one face embedding per photo and the embedder; ValueError (or the
# project's ConfigError) saying what is wrong with a photo
Embed = Callable[[list[tuple[str, bytes]]], tuple[list[bytes], ModelRef]]
PHOTO_MAX_BYTES = 20 * 1024 * 1024


class Refused(Exception):
    """What cannot be taught from this alert, in words for the page (HTTP 409)."""


def lessons(gallery: Gallery) -> dict[str, dict[str, str]]:
    """alert id -> what it taught, as the page shows it: {"name": person, "how": "is" or "not"}."""
    found = {}
    for entry in gallery.entries():
        for sources, how in ((entry.images, "is"), (entry.negative_sources, "not")):
            for alert_id in filter(None, map(alert_of, sources)):
                found[alert_id] = {"name": entry.name, "how": how}
    return found


def change_entry(topic: str, gallery: Gallery, entry: GalleryEntry | None, person_id: str) -> None:
    """Publish an entry (or remove the person) and hold it here at once, before the topic brings it."""
    value = None if entry is None else pack_gallery_entry(entry)
    publish(topic, person_id, value)
    gallery.apply(person_id.encode(), value)


NAME_EXPECTED = 'expected {"name": "..."} with a letter or digit in it'


def name_in(body: bytes) -> str | None:
    """The person's name a request's ``{"name": "..."}`` gives, or None when it gives none that names."""
    try:
        name = json.loads(body)["name"].strip()
        person_id_for(name)
    except (ValueError, KeyError, TypeError, AttributeError, SchemaError):
        return None
    return name


def alert_faces(config: DashboardConfig, alert: Alert) -> tuple[list, ModelRef]:
    """The alert's faces that carry an embedding, as its detection events hold them, and the embedder."""
    faces, embedder = evidence.evidence_faces(alert, config.detections_topic)
    if not faces or embedder is None:
        raise Refused(
            "the faces of this alert are no longer in Kafka, or its events carry no embeddings "
            "(the detector needs --embedder sface)"
        )
    return [face for face in faces if face.embedding is not None], embedder


def teach_alert(config: DashboardConfig, gallery: Gallery, alert: Alert, name: str, by: str) -> dict:
    """Enrol the faces of ``alert`` good enough for it as ``name`` (a new person or more faces of one)."""
    seen, embedder = alert_faces(config, alert)
    good, why = face_quality.enrollable(seen)
    if not good:
        raise Refused(f"none of the {len(seen)} faces of this alert can be enrolled: {why}")
    faces = [face.embedding for face in good]
    entry = taught(gallery.entry(person_id_for(name)), name, embedder, faces, alert.alert_id)
    change_entry(config.gallery_topic, gallery, entry, entry.person_id)
    log.info("%s taught that the faces of alert %s are %s (%s)", by, alert.alert_id, name, entry.person_id)
    return {"person_id": entry.person_id, "name": entry.name, "faces": len(faces)}


def routes(
    config: DashboardConfig, engine: Engine, gallery: Gallery, find_alert: FindAlert, embed: Embed | None = None
) -> list:
    def change(entry: GalleryEntry | None, person_id: str) -> None:
        change_entry(config.gallery_topic, gallery, entry, person_id)

    def teach(alert: Alert, name: str, by: str) -> dict:
        return teach_alert(config, gallery, alert, name, by)

    def not_person(alert: Alert, by: str) -> dict:
        named = next((s.person for s in alert.evidence if s.person), None)
        entry = next((e for e in gallery.entries() if e.name == named), None)
        if alert.kind != "person_seen" or entry is None:
            raise Refused("only a person_seen alert names an enrolled person whose match can be wrong")
        faces = [face.embedding for face in alert_faces(config, alert)[0]]  # poor faces too: they were matched, wrongly
        change(not_them(entry, faces, alert.alert_id), entry.person_id)
        log.info("%s taught that the faces of alert %s are not %s", by, alert.alert_id, entry.person_id)
        return {"person_id": entry.person_id, "name": entry.name, "negatives": len(faces)}

    def undo(alert_id: str, by: str) -> dict:
        changes = undo_lessons(gallery, alert_id)
        if not changes:
            raise Refused("this alert taught the gallery nothing")
        for person_id, entry in changes.items():
            change(entry, person_id)
        log.info("%s undid what alert %s taught (%s)", by, alert_id, ", ".join(changes))
        return {"undone": list(changes)}

    def handler(action: Callable[..., dict], kind: str, needs_name: bool = False) -> Callable:
        async def handle(request: Request) -> Response:
            alert_id, caller = request.path_params["alert_id"], caller_of(request)
            args: list = []
            if needs_name:
                name = name_in(await request.body())
                if name is None:
                    return PlainTextResponse(NAME_EXPECTED, 400)
                args.append(name)
            subject: str | Alert | None = alert_id  # undo needs only the id: the alert may be long gone
            if action is not undo:
                subject = await run_in_threadpool(find_alert, alert_id)
                if subject is None:
                    return PlainTextResponse("no such alert in the feed or the alert store", 404)
            try:
                done = await run_in_threadpool(action, subject, *args, caller.name)
            except (Refused, ValueError) as exc:
                return PlainTextResponse(str(exc), 409)
            subject_said = f"alert {alert_id}" + (f" is {args[0]}" if args else "")
            await run_in_threadpool(audit.record, engine, audit_entry(caller, kind, subject_said))
            return JSONResponse(done)

        return handle

    async def enrol(request: Request) -> Response:
        """A photo's face enrolled under a name: a new person, or one more face of one."""
        if embed is None:
            return PlainTextResponse("this dashboard cannot embed photos (run it as `facestream dashboard`)", 501)
        name, photo = request.query_params.get("name", "").strip(), request.query_params.get("photo", "photo.jpg")
        caller = caller_of(request)
        data = await request.body()
        try:
            person_id_for(name)
        except SchemaError:
            return PlainTextResponse("enrol?name=... needs a name with a letter or digit in it", 400)
        if not data or len(data) > PHOTO_MAX_BYTES:
            return PlainTextResponse(f"send the photo as the body, up to {PHOTO_MAX_BYTES >> 20} MB", 400)

        def enrolled() -> dict:
            faces, embedder = embed([(photo, data)])
            entry = with_faces(gallery.entry(person_id_for(name)), name, embedder, faces, [photo])
            change(entry, entry.person_id)
            log.info("%s enrolled %s (%s) from the photo %s", caller.name, name, entry.person_id, photo)
            audit.record(engine, audit_entry(caller, "enrol", f"person {entry.person_id} from a photo"))
            return {"person_id": entry.person_id, "name": entry.name, "faces": len(entry.embeddings)}

        try:
            return JSONResponse(await run_in_threadpool(enrolled))
        except (ValueError, FacestreamError) as exc:
            return PlainTextResponse(str(exc), 409)

    return [
        Route("/api/gallery/enrol", enrol, methods=["POST"]),
        Route("/api/alerts/{alert_id}/teach", handler(teach, "teach", needs_name=True), methods=["POST"]),
        Route("/api/alerts/{alert_id}/not-person", handler(not_person, "not-person"), methods=["POST"]),
        Route("/api/alerts/{alert_id}/undo", handler(undo, "undo"), methods=["POST"]),
    ]
