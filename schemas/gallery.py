"""Gallery entry: one enrolled person, on the compacted topic ``faces.gallery``, key = person_id.

A record with the same key replaces the person's entry; a record with no value (a tombstone) removes
the person. Every reader of the topic from its start holds the same gallery. Faces taught from an
alert on the dashboard name it as their source (``alert:<alert id>``), so the teaching can be undone."""

import re
from dataclasses import dataclass
from typing import Any

from facestream.schemas import _fields as f
from facestream.schemas.detection import ModelRef, model_ref_from

_TYPE = "GalleryEntry"
EMBEDDINGS_MAX = 32  # reference faces per person


@dataclass(frozen=True, slots=True)
class GalleryEntry:
    person_id: str  # the record key
    name: str  # as enrolled
    embedder: ModelRef  # which model made the embeddings: only faces of the same embedder compare
    embeddings: tuple[bytes, ...]  # unit vectors, little-endian float16, one per enrolled image
    enrolled_ts_ns: int
    images: tuple[str, ...]  # where each embedding came from: an image's file name, or alert:<alert id>
    watched: bool = False  # on the watchlist: seeing them raises a person_seen alert
    # Faces that are not this person though they resemble them ("not this person" on the dashboard),
    # as embeddings are, each with its source: a face closer to one of them than to the person is not them.
    negatives: tuple[bytes, ...] = ()
    negative_sources: tuple[str, ...] = ()

    def fields(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "person_id": self.person_id,
            "name": self.name,
            "embedder": self.embedder.fields(),
            "embeddings": list(self.embeddings),
            "enrolled_ts_ns": self.enrolled_ts_ns,
            "images": list(self.images),
        }
        if self.watched:
            out["watched"] = True
        if self.negatives:
            out["negatives"] = list(self.negatives)
            out["negative_sources"] = list(self.negative_sources)
        return out


def person_id_for(name: str) -> str:
    """The key a name is enrolled under: lower case, runs of anything but letters and digits as '-'."""
    person_id = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    if not person_id:
        raise f.SchemaError(_TYPE, "name", f"needs at least one letter or digit, got {name!r}")
    return person_id


def entry_from_fields(fields: dict[str, Any]) -> GalleryEntry:
    vectors = f.sequence(_TYPE, "embeddings", f.present(_TYPE, fields, "embeddings"))
    if not 1 <= len(vectors) <= EMBEDDINGS_MAX:
        raise f.SchemaError(_TYPE, "embeddings", f"1 to {EMBEDDINGS_MAX} of them, got {len(vectors)}")
    images = _texts("images", f.present(_TYPE, fields, "images"))
    negatives = f.sequence(_TYPE, "negatives", fields.get("negatives", []))
    sources = _texts("negative_sources", fields.get("negative_sources", []))
    if len(negatives) > EMBEDDINGS_MAX or len(sources) != len(negatives):
        raise f.SchemaError(_TYPE, "negatives", f"at most {EMBEDDINGS_MAX}, each with its source in negative_sources")
    return GalleryEntry(
        person_id=f.text(_TYPE, fields, "person_id"),
        name=f.text(_TYPE, fields, "name"),
        embedder=model_ref_from(f.present(_TYPE, fields, "embedder"), "embedder", _TYPE),
        embeddings=tuple(f.float16_vector(_TYPE, f"embeddings[{i}]", v) for i, v in enumerate(vectors)),
        enrolled_ts_ns=f.integer(_TYPE, fields, "enrolled_ts_ns"),
        images=tuple(images),
        watched=_flag(fields, "watched"),
        negatives=tuple(f.float16_vector(_TYPE, f"negatives[{i}]", v) for i, v in enumerate(negatives)),
        negative_sources=tuple(sources),
    )


def _texts(name: str, value: Any) -> list[str]:
    texts = f.sequence(_TYPE, name, value)
    if not all(isinstance(text, str) for text in texts):
        raise f.SchemaError(_TYPE, name, "expected a list of strings")
    return list(texts)


def _flag(fields: dict[str, Any], name: str) -> bool:
    value = fields.get(name, False)
    if not isinstance(value, bool):
        raise f.SchemaError(_TYPE, name, f"expected true or false, got {type(value).__name__}")
    return value


def pack_gallery_entry(entry: GalleryEntry) -> bytes:
    """Validate and serialise; raises SchemaError exactly where ``unpack_gallery_entry`` would."""
    fields = entry.fields()
    entry_from_fields(fields)
    return f.pack_map(fields)


def unpack_gallery_entry(payload: bytes) -> GalleryEntry:
    return entry_from_fields(f.unpack_map(_TYPE, payload))
