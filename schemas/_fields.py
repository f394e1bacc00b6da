"""Strict field checks shared by the message types: one place decides what "valid" means."""

import math
from typing import Any

import msgpack

from facestream.schemas.errors import SchemaError

SCHEMA_VERSION = 1
ID_MAX = 255  # characters of an id or name in any record (camera, person, alert, event)


def unpack_map(message_type: str, payload: bytes) -> dict[str, Any]:
    """msgpack bytes -> dict, with the version gate every reader must apply first."""
    if not isinstance(payload, (bytes, bytearray, memoryview)) or len(payload) == 0:
        raise SchemaError(message_type, None, "empty payload")
    try:
        fields = msgpack.unpackb(payload, raw=False, strict_map_key=True)
    except Exception as exc:  # msgpack raises several unrelated types for bad bytes
        raise SchemaError(message_type, None, f"not valid msgpack ({type(exc).__name__}: {exc})") from None
    if not isinstance(fields, dict):
        raise SchemaError(message_type, None, f"expected a msgpack map, got {type(fields).__name__}")
    version = integer(message_type, fields, "schema_version", minimum=1)
    if version > SCHEMA_VERSION:
        raise SchemaError(
            message_type,
            "schema_version",
            f"major version {version} is newer than this reader understands ({SCHEMA_VERSION}); upgrade facestream",
        )
    return fields


def pack_map(fields: dict[str, Any]) -> bytes:
    return msgpack.packb({"schema_version": SCHEMA_VERSION, **fields}, use_bin_type=True)


def present(message_type: str, fields: dict[str, Any], name: str, prefix: str = "") -> Any:
    """``fields[name]``; ``prefix`` says where a nested map sits (e.g. ``faces[2].``) in errors."""
    if name not in fields:
        raise SchemaError(message_type, prefix + name, "missing")
    return fields[name]


def integer(message_type: str, fields: dict[str, Any], name: str, minimum: int = 0) -> int:
    value = present(message_type, fields, name)
    if isinstance(value, bool) or not isinstance(value, int):
        raise SchemaError(message_type, name, f"expected an integer, got {type(value).__name__}")
    if value < minimum:
        raise SchemaError(message_type, name, f"must be >= {minimum}, got {value}")
    return value


def text(message_type: str, fields: dict[str, Any], name: str, max_len: int = ID_MAX, prefix: str = "") -> str:
    value = present(message_type, fields, name, prefix)
    if not isinstance(value, str):
        raise SchemaError(message_type, prefix + name, f"expected a string, got {type(value).__name__}")
    if not value or len(value) > max_len:
        raise SchemaError(message_type, prefix + name, f"must be 1 to {max_len} characters, got {len(value)}")
    return value


def blob(message_type: str, fields: dict[str, Any], name: str) -> bytes:
    value = present(message_type, fields, name)
    if not isinstance(value, (bytes, bytearray)):
        raise SchemaError(message_type, name, f"expected bytes, got {type(value).__name__}")
    if not value:
        raise SchemaError(message_type, name, "is empty")
    return bytes(value)


VECTOR_MAX_BYTES = 4096  # 2,048 float16 values; SFace's 128 take 256 bytes


def float16_vector(message_type: str, name: str, value: Any) -> bytes:
    """An embedding: little-endian float16 values as bytes, non-empty and at most VECTOR_MAX_BYTES."""
    if not isinstance(value, (bytes, bytearray)) or not value or len(value) % 2:
        raise SchemaError(message_type, name, "expected float16 bytes (a non-empty, even length)")
    if len(value) > VECTOR_MAX_BYTES:
        raise SchemaError(message_type, name, f"at most {VECTOR_MAX_BYTES} bytes, got {len(value)}")
    return bytes(value)


def number(message_type: str, name: str, value: Any) -> float:
    if type(value) is float and value - value == 0.0:  # the common case, checked first: a finite float
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise SchemaError(message_type, name, f"expected a finite number, got {value!r}")
    return float(value)


def sequence(message_type: str, name: str, value: Any, length: int | None = None) -> list | tuple:
    if not isinstance(value, (list, tuple)):
        raise SchemaError(message_type, name, f"expected a list, got {type(value).__name__}")
    if length is not None and len(value) != length:
        raise SchemaError(message_type, name, f"expected {length} items, got {len(value)}")
    return value


_FLOAT = frozenset((float,))


def floats(message_type: str, where: str, value: Any, length: int) -> tuple[float, ...]:
    """A list of ``length`` finite numbers. Checked as a whole first (all floats with a finite sum
    means all finite): every event a detector publishes passes through here once per face or person."""
    items = sequence(message_type, where, value, length)
    if set(map(type, items)) == _FLOAT and math.isfinite(sum(items)):
        return tuple(items)
    return tuple(number(message_type, where, v) for v in items)


def box(message_type: str, where: str, value: Any) -> tuple[float, float, float, float]:
    """[x0, y0, x1, y1] with x0 <= x1 and y0 <= y1. Four ordered floats, as every face's box is, are
    taken at once; anything else goes through ``floats``, which says what is wrong."""
    if type(value) is list and len(value) == 4:
        x0, y0, x1, y1 = value
        if type(x0) is type(y0) is type(x1) is type(y1) is float and math.isfinite(x0 + y0 + x1 + y1):
            if x0 <= x1 and y0 <= y1:
                return x0, y0, x1, y1
    x0, y0, x1, y1 = floats(message_type, where, value, 4)
    if x1 < x0 or y1 < y0:
        raise SchemaError(message_type, where, f"needs x0 <= x1 and y0 <= y1, got {[x0, y0, x1, y1]}")
    return x0, y0, x1, y1


def score(message_type: str, where: str, value: Any) -> float:
    """A confidence within 0..1."""
    result = number(message_type, where, value)
    if not 0.0 <= result <= 1.0:
        raise SchemaError(message_type, where, f"must be within 0..1, got {result}")
    return result


def outcome_fields(event: Any) -> dict[str, Any]:
    """The fields every per-frame event shares, as its map holds them (``frame_outcome`` reads them
    back); ``skipped_before`` only when frames were skipped."""
    out = {
        "event_id": event.event_id,
        "camera_id": event.camera_id,
        "frame_seq": event.frame_seq,
        "capture_ts_ns": event.capture_ts_ns,
        "detect_ts_ns": event.detect_ts_ns,
        "model": event.model.fields(),
        "width": event.width,
        "height": event.height,
    }
    if event.skipped_before:
        out["skipped_before"] = event.skipped_before
    return out


def frame_outcome(message_type: str, fields: dict[str, Any]) -> dict[str, Any]:
    """The fields every per-frame event shares (which frame, when, its size, what was skipped before
    it), as keyword arguments; ``model`` is left to the caller, which knows its ModelRef type."""
    return {
        "event_id": text(message_type, fields, "event_id"),
        "camera_id": text(message_type, fields, "camera_id"),
        "frame_seq": integer(message_type, fields, "frame_seq"),
        "capture_ts_ns": integer(message_type, fields, "capture_ts_ns"),
        "detect_ts_ns": integer(message_type, fields, "detect_ts_ns"),
        "width": integer(message_type, fields, "width", minimum=1),
        "height": integer(message_type, fields, "height", minimum=1),
        "skipped_before": integer(message_type, fields, "skipped_before", minimum=1)
        if "skipped_before" in fields
        else 0,
    }
