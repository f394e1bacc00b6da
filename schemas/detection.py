"""Detection event: the faces found in one frame, on topic ``detections``, key = camera_id."""

import uuid
from dataclasses import dataclass
from typing import Any

from facestream.schemas import _fields as f

_TYPE = "DetectionEvent"
# Fixed namespace so that every replica, and every rerun, names the same event the same way.
_EVENT_NAMESPACE = uuid.UUID("5b0e5f8c-6f0e-4f43-9a43-0c6f7ce5e1d1")


@dataclass(frozen=True, slots=True)
class ModelRef:
    """Which detector made an event: enough to tell two weight files of one model apart."""

    name: str
    version: str
    weights_sha256: str

    def fields(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.version, "weights_sha256": self.weights_sha256}


@dataclass(frozen=True, slots=True)
class Face:
    box: tuple[float, float, float, float]  # x0, y0, x1, y1 in original frame pixels
    score: float  # 0..1
    landmarks: tuple[tuple[float, float], ...] | None = None  # (x, y) pairs, model-specific order
    embedding: bytes | None = None  # unit vector as little-endian float16 (the event's embedder made it)
    sharpness: float | None = None  # variance of the Laplacian of the embedder's aligned crop (with embeddings)
    track: int | None = None  # the detector's track on this camera: faces of one track are one person (README)

    def fields(self) -> dict[str, Any]:
        out: dict[str, Any] = {"box": list(self.box), "score": self.score}
        if self.landmarks is not None:
            out["landmarks"] = [list(p) for p in self.landmarks]
        if self.embedding is not None:
            out["embedding"] = self.embedding
        if self.sharpness is not None:
            out["sharpness"] = self.sharpness
        if self.track is not None:
            out["track"] = self.track
        return out


@dataclass(frozen=True, slots=True)
class DetectionEvent:
    event_id: str
    camera_id: str
    frame_seq: int
    capture_ts_ns: int
    detect_ts_ns: int
    model: ModelRef
    width: int
    height: int
    faces: tuple[Face, ...]
    embedder: ModelRef | None = None  # which model made the faces' embeddings, when they have any
    skipped_before: int = 0  # frames of this camera skipped (too old, over its rate) since its previous event

    def fields(self) -> dict[str, Any]:
        out = {**f.outcome_fields(self), "faces": [face.fields() for face in self.faces]}
        if self.embedder is not None:
            out["embedder"] = self.embedder.fields()
        return out


def event_id_for(camera_id: str, frame_seq: int, model: ModelRef) -> str:
    """Deterministic: a redelivered frame gets the same id, so consumers can drop duplicates."""
    name = f"{camera_id}\x1f{frame_seq}\x1f{model.name}\x1f{model.version}\x1f{model.weights_sha256}"
    return str(uuid.uuid5(_EVENT_NAMESPACE, name))


MAX_TRACK = 2**63 - 1  # a track id is a signed 64-bit integer's positive range
REFS_KEPT = 64  # model refs remembered as checked: an event carries one or two, nearly always the same
_checked_refs: dict[tuple, ModelRef] = {}


def model_ref_from(value: Any, where: str = "model", message_type: str = _TYPE) -> ModelRef:
    """The ModelRef ``value`` holds. Fields equal to a ref checked before give that ref without
    checking again (readers see the same few models in every event)."""
    if not isinstance(value, dict):
        raise f.SchemaError(message_type, where, f"expected a map, got {type(value).__name__}")
    try:
        return _checked_refs[value.get("name"), value.get("version"), value.get("weights_sha256")]
    except (KeyError, TypeError):  # not seen yet, or not even hashable (the checks below say what is wrong)
        pass
    ref = ModelRef(
        name=f.text(message_type, value, "name", prefix=f"{where}."),
        version=f.text(message_type, value, "version", prefix=f"{where}."),
        weights_sha256=f.text(message_type, value, "weights_sha256", prefix=f"{where}."),
    )
    if len(_checked_refs) < REFS_KEPT:
        _checked_refs[ref.name, ref.version, ref.weights_sha256] = ref
    return ref


def _face_from(index: int, value: Any) -> Face:
    """The event's face number ``index``; its errors name the face (``faces[2].box``), a name made
    only for an error, as every face of every event a reader takes comes through here."""
    try:
        return _face(value)
    except f.SchemaError as exc:
        raise f.SchemaError(_TYPE, f"faces[{index}]" + (f".{exc.field}" if exc.field else ""), exc.problem) from None


def _face(value: Any) -> Face:
    if not isinstance(value, dict):
        raise f.SchemaError(_TYPE, None, f"expected a map, got {type(value).__name__}")
    box = f.box(_TYPE, "box", f.present(_TYPE, value, "box"))
    score = f.score(_TYPE, "score", f.present(_TYPE, value, "score"))
    landmarks = value.get("landmarks")
    if landmarks is not None:
        landmarks = tuple([f.floats(_TYPE, "landmarks", p, 2) for p in f.sequence(_TYPE, "landmarks", landmarks)])
    embedding = value.get("embedding")
    if embedding is not None:
        embedding = f.float16_vector(_TYPE, "embedding", embedding)
    sharpness = value.get("sharpness")
    if sharpness is not None:
        sharpness = f.number(_TYPE, "sharpness", sharpness)
        if sharpness < 0:
            raise f.SchemaError(_TYPE, "sharpness", f"must be 0 or more, got {sharpness}")
    track = value.get("track")
    if track is not None:
        track = f.integer(_TYPE, value, "track")
        if track > MAX_TRACK:
            raise f.SchemaError(_TYPE, "track", f"must be at most 2^63 - 1, got {track}")
    return Face(box=box, score=score, landmarks=landmarks, embedding=embedding, sharpness=sharpness, track=track)


def event_from_fields(fields: dict[str, Any]) -> DetectionEvent:
    faces = tuple(
        [_face_from(i, face) for i, face in enumerate(f.sequence(_TYPE, "faces", f.present(_TYPE, fields, "faces")))]
    )
    embedder = None if fields.get("embedder") is None else model_ref_from(fields["embedder"], "embedder")
    if embedder is None and any(face.embedding is not None for face in faces):
        raise f.SchemaError(_TYPE, "embedder", "missing, while faces carry embeddings")
    return DetectionEvent(
        **f.frame_outcome(_TYPE, fields),
        model=model_ref_from(f.present(_TYPE, fields, "model")),
        faces=faces,
        embedder=embedder,
    )


def pack_detection(event: DetectionEvent, check: bool = True) -> bytes:
    """Validate and serialise; raises SchemaError exactly where ``unpack_detection`` would. The
    detector passes ``check=False`` for the events it builds from its own arrays (checking them again
    cost it as much as building them; readers still check every record, and tests the builder)."""
    fields = event.fields()
    if check:
        event_from_fields(fields)
    return f.pack_map(fields)


def unpack_detection(payload: bytes) -> DetectionEvent:
    return event_from_fields(f.unpack_map(_TYPE, payload))
