"""Alert: something people act on (a stranger at the gate, a crowd forming), on topic ``alerts``,
key = camera_id. One alert goes through states ``new`` -> ``update``... -> ``end``, all under one
``alert_id``."""

import uuid
from dataclasses import dataclass
from typing import Any

from facestream.schemas import _fields as f
from facestream.schemas.detection import ModelRef, model_ref_from
from facestream.schemas.kinds import BY_NAME

_TYPE = "Alert"
STATES = ("new", "update", "end")
EVIDENCE_MAX = 10  # sightings an alert carries at most
ZONE_MAX, REASON_MAX = 200, 1000  # characters of a zone name and of a reason
_ALERT_NAMESPACE = uuid.UUID("0d5f7e0c-3c1b-4b8e-9a57-6d1f3e0a9b21")


@dataclass(frozen=True, slots=True)
class Sighting:
    """One frame that supports an alert: which event, where, and (strangers) how close to the gallery."""

    event_id: str
    frame_seq: int
    capture_ts_ns: int
    box: tuple[float, float, float, float] | None = None  # the face (strangers) or person (falls), frame pixels
    similarity: float | None = None  # best cosine similarity to the gallery (strangers), -1..1
    score: float | None = None  # the detector's confidence in the box, 0..1 (with a box only)
    person: str | None = None  # the enrolled person the face is (person_seen), by the name enrolled
    track: str | None = None  # the camera's face track it belongs to (stranger, person_seen): who, over time

    def fields(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "event_id": self.event_id,
            "frame_seq": self.frame_seq,
            "capture_ts_ns": self.capture_ts_ns,
        }
        if self.box is not None:
            out["box"] = list(self.box)
        if self.similarity is not None:
            out["similarity"] = self.similarity
        if self.score is not None:
            out["score"] = self.score
        if self.person is not None:
            out["person"] = self.person
        if self.track is not None:
            out["track"] = self.track
        return out


@dataclass(frozen=True, slots=True)
class Alert:
    alert_id: str
    kind: str  # the name of a row of schemas/kinds.py
    state: str  # one of STATES
    camera_id: str
    started_ts_ns: int  # capture time of the frame that opened the alert
    updated_ts_ns: int  # capture time of the latest frame behind this record
    evidence: tuple[Sighting, ...]  # the best few sightings, at most EVIDENCE_MAX
    count: int  # what its kind's row (schemas/kinds.py) says: sightings, faces, attempts, seconds, ...
    ended_ts_ns: int | None = None  # set when state is "end"
    reason: str | None = None  # camera_offline: why, in words (the producer's last error, credentials masked)
    zone: str | None = None  # the camera's zone the alert is about, for a rule limited to zones (or loitering)
    # strangers: who it is, as the mean of their faces' embeddings (a unit vector, little-endian float16)
    # and the embedder that made them, so that the alert store can tell a stranger who comes back
    face: bytes | None = None
    embedder: ModelRef | None = None

    def fields(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "alert_id": self.alert_id,
            "kind": self.kind,
            "state": self.state,
            "camera_id": self.camera_id,
            "started_ts_ns": self.started_ts_ns,
            "updated_ts_ns": self.updated_ts_ns,
            "evidence": [s.fields() for s in self.evidence],
            "count": self.count,
        }
        if self.ended_ts_ns is not None:
            out["ended_ts_ns"] = self.ended_ts_ns
        if self.reason is not None:
            out["reason"] = self.reason
        if self.zone is not None:
            out["zone"] = self.zone
        if self.face is not None:
            out["face"] = self.face
        if self.embedder is not None:
            out["embedder"] = self.embedder.fields()
        return out


def alert_id_for(camera_id: str, kind: str, opening_event_id: str) -> str:
    """Deterministic: the same events open the same alert under the same id, however often replayed."""
    return str(uuid.uuid5(_ALERT_NAMESPACE, f"{camera_id}\x1f{kind}\x1f{opening_event_id}"))


def _sighting_from(index: int, value: Any) -> Sighting:
    where = f"evidence[{index}]"
    if not isinstance(value, dict):
        raise f.SchemaError(_TYPE, where, f"expected a map, got {type(value).__name__}")
    box = None
    if value.get("box") is not None:
        box = tuple(f.number(_TYPE, f"{where}.box", v) for v in f.sequence(_TYPE, f"{where}.box", value["box"], 4))
    similarity = None
    if value.get("similarity") is not None:
        similarity = f.number(_TYPE, f"{where}.similarity", value["similarity"])
        if not -1.0 - 1e-3 <= similarity <= 1.0 + 1e-3:
            raise f.SchemaError(_TYPE, f"{where}.similarity", f"must be within -1..1, got {similarity}")
    score = None
    if value.get("score") is not None:
        score = f.score(_TYPE, f"{where}.score", value["score"])
        if box is None:
            raise f.SchemaError(_TYPE, f"{where}.score", "is the box's score: none without a box")
    return Sighting(
        event_id=f.text(_TYPE, value, "event_id", prefix=f"{where}."),
        frame_seq=f.integer(_TYPE, value, "frame_seq"),
        capture_ts_ns=f.integer(_TYPE, value, "capture_ts_ns"),
        box=box,  # type: ignore[arg-type]  # four floats: f.box checked the length
        similarity=similarity,
        score=score,
        person=None if value.get("person") is None else f.text(_TYPE, value, "person", prefix=f"{where}."),
        track=None if value.get("track") is None else f.text(_TYPE, value, "track", prefix=f"{where}."),
    )


def _choice(fields: dict[str, Any], name: str, choices: tuple[str, ...]) -> str:
    value = f.text(_TYPE, fields, name)
    if value not in choices:
        raise f.SchemaError(_TYPE, name, f"must be one of {', '.join(choices)}, got {value!r}")
    return value


def alert_from_fields(fields: dict[str, Any]) -> Alert:
    evidence = f.sequence(_TYPE, "evidence", f.present(_TYPE, fields, "evidence"))
    if len(evidence) > EVIDENCE_MAX:
        raise f.SchemaError(_TYPE, "evidence", f"at most {EVIDENCE_MAX} sightings, got {len(evidence)}")
    state = _choice(fields, "state", STATES)
    ended = None if fields.get("ended_ts_ns") is None else f.integer(_TYPE, fields, "ended_ts_ns")
    if (state == "end") != (ended is not None):
        raise f.SchemaError(_TYPE, "ended_ts_ns", "is set exactly when state is 'end'")
    face = None if fields.get("face") is None else f.float16_vector(_TYPE, "face", fields["face"])
    embedder = None if fields.get("embedder") is None else model_ref_from(fields["embedder"], "embedder", _TYPE)
    if (face is None) != (embedder is None):
        raise f.SchemaError(_TYPE, "embedder", "is set exactly when face is")
    return Alert(
        alert_id=f.text(_TYPE, fields, "alert_id"),
        kind=_choice(fields, "kind", tuple(BY_NAME)),
        state=state,
        camera_id=f.text(_TYPE, fields, "camera_id"),
        started_ts_ns=f.integer(_TYPE, fields, "started_ts_ns"),
        updated_ts_ns=f.integer(_TYPE, fields, "updated_ts_ns"),
        evidence=tuple(_sighting_from(i, s) for i, s in enumerate(evidence)),
        count=f.integer(_TYPE, fields, "count"),
        ended_ts_ns=ended,
        reason=None if fields.get("reason") is None else f.text(_TYPE, fields, "reason", max_len=REASON_MAX),
        zone=None if fields.get("zone") is None else f.text(_TYPE, fields, "zone", max_len=ZONE_MAX),
        face=face,
        embedder=embedder,
    )


def pack_alert(alert: Alert) -> bytes:
    """Validate and serialise; raises SchemaError exactly where ``unpack_alert`` would."""
    fields = alert.fields()
    alert_from_fields(fields)
    return f.pack_map(fields)


def unpack_alert(payload: bytes) -> Alert:
    return alert_from_fields(f.unpack_map(_TYPE, payload))
