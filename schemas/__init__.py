"""The contract between facestream's services: message types, their codecs, their one error.

Every reader rejects a newer major ``schema_version`` and ignores fields it does not know, so
producers may add fields without breaking older consumers. See ``schemas/README.md``.
"""

from facestream.schemas._fields import SCHEMA_VERSION
from facestream.schemas.detection import (
    DetectionEvent,
    Face,
    ModelRef,
    event_id_for,
    pack_detection,
    unpack_detection,
)
from facestream.schemas.errors import SchemaError
from facestream.schemas.frame import Frame, pack_frame, unpack_frame

FRAMES_TOPIC = "frames"
DETECTIONS_TOPIC = "detections"
DEAD_LETTER_TOPIC = "frames.dlq"

__all__ = [
    "DEAD_LETTER_TOPIC",
    "DETECTIONS_TOPIC",
    "FRAMES_TOPIC",
    "SCHEMA_VERSION",
    "DetectionEvent",
    "Face",
    "Frame",
    "ModelRef",
    "SchemaError",
    "unpack_detection",
    "unpack_frame",
    "pack_detection",
    "pack_frame",
    "event_id_for",
]
