"""Frame message: one encoded camera image on topic ``frames``, key = camera_id."""

from dataclasses import dataclass
from typing import Any

from facestream.schemas import _fields as f

_TYPE = "Frame"
ENCODINGS = ("jpeg",)


@dataclass(frozen=True, slots=True)
class Frame:
    camera_id: str
    frame_seq: int  # per camera, monotonic
    capture_ts_ns: int  # wall clock (Unix epoch, ns) when the camera delivered the image
    width: int
    height: int
    data: bytes
    encoding: str = "jpeg"
    skipped_before: int = 0  # frames of this camera the producer did not send since its previous one (motion gate)

    def fields(self) -> dict[str, Any]:
        out = {
            "camera_id": self.camera_id,
            "frame_seq": self.frame_seq,
            "capture_ts_ns": self.capture_ts_ns,
            "width": self.width,
            "height": self.height,
            "encoding": self.encoding,
            "data": self.data,
        }
        if self.skipped_before:
            out["skipped_before"] = self.skipped_before
        return out


def frame_from_fields(fields: dict[str, Any]) -> Frame:
    encoding = f.text(_TYPE, fields, "encoding")
    if encoding not in ENCODINGS:
        raise f.SchemaError(_TYPE, "encoding", f"unsupported {encoding!r}; supported: {', '.join(ENCODINGS)}")
    return Frame(
        camera_id=f.text(_TYPE, fields, "camera_id"),
        frame_seq=f.integer(_TYPE, fields, "frame_seq"),
        capture_ts_ns=f.integer(_TYPE, fields, "capture_ts_ns"),
        width=f.integer(_TYPE, fields, "width", minimum=1),
        height=f.integer(_TYPE, fields, "height", minimum=1),
        encoding=encoding,
        data=f.blob(_TYPE, fields, "data"),
        skipped_before=f.integer(_TYPE, fields, "skipped_before", minimum=1) if "skipped_before" in fields else 0,
    )


def pack_frame(frame: Frame) -> bytes:
    """Validate and serialise; raises SchemaError exactly where ``unpack_frame`` would."""
    fields = frame.fields()
    frame_from_fields(fields)
    return f.pack_map(fields)


def unpack_frame(payload: bytes) -> Frame:
    return frame_from_fields(f.unpack_map(_TYPE, payload))
