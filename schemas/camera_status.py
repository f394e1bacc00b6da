"""CameraStatus: how a producer's camera is doing, on topic ``camera-status``, key = camera_id. A
producer sends one per camera every few seconds and at once on every change of state, so a reader
knows a camera is down (``reconnecting``), and knows its producer is gone when they stop coming."""

from dataclasses import dataclass
from typing import Any

from facestream.schemas import _fields as f

_TYPE = "CameraStatus"
CAMERA_STATES = ("connecting", "streaming", "reconnecting", "failed", "ended", "stopped")
ACTIVE_STATES = ("connecting", "streaming", "reconnecting")  # the producer still serves the camera
TEXT_MAX = 1000


@dataclass(frozen=True, slots=True)
class CameraStatus:
    camera_id: str
    ts_ns: int  # when the producer wrote this status (Unix epoch, ns)
    state: str  # one of CAMERA_STATES
    source: str  # what the camera reads, credentials masked
    frames_sent: int  # since the producer started
    attempts: int  # failed attempts to open or read the source since it last gave a frame
    interval_ms: int  # the next status of this camera comes within this many ms while it is active
    last_frame_ts_ns: int | None = None  # capture time of the last frame sent
    error: str | None = None  # the last failure, credentials masked

    def fields(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "camera_id": self.camera_id,
            "ts_ns": self.ts_ns,
            "state": self.state,
            "source": self.source,
            "frames_sent": self.frames_sent,
            "attempts": self.attempts,
            "interval_ms": self.interval_ms,
        }
        if self.last_frame_ts_ns is not None:
            out["last_frame_ts_ns"] = self.last_frame_ts_ns
        if self.error is not None:
            out["error"] = self.error
        return out


def camera_status_from_fields(fields: dict[str, Any]) -> CameraStatus:
    state = f.text(_TYPE, fields, "state")
    if state not in CAMERA_STATES:
        raise f.SchemaError(_TYPE, "state", f"must be one of {', '.join(CAMERA_STATES)}, got {state!r}")
    last = fields.get("last_frame_ts_ns")
    return CameraStatus(
        camera_id=f.text(_TYPE, fields, "camera_id"),
        ts_ns=f.integer(_TYPE, fields, "ts_ns"),
        state=state,
        source=f.text(_TYPE, fields, "source", max_len=TEXT_MAX),
        frames_sent=f.integer(_TYPE, fields, "frames_sent"),
        attempts=f.integer(_TYPE, fields, "attempts"),
        interval_ms=f.integer(_TYPE, fields, "interval_ms", minimum=1),
        last_frame_ts_ns=None if last is None else f.integer(_TYPE, fields, "last_frame_ts_ns"),
        error=None if fields.get("error") is None else f.text(_TYPE, fields, "error", max_len=TEXT_MAX),
    )


def pack_camera_status(status: CameraStatus) -> bytes:
    """Validate and serialise; raises SchemaError exactly where ``unpack_camera_status`` would."""
    fields = status.fields()
    camera_status_from_fields(fields)
    return f.pack_map(fields)


def unpack_camera_status(payload: bytes) -> CameraStatus:
    return camera_status_from_fields(f.unpack_map(_TYPE, payload))
