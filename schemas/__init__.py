"""The contract between facestream's services: message types, their codecs, their one error.

Every reader rejects a newer major ``schema_version`` and ignores fields it does not know, so
producers may add fields without breaking older consumers. See ``schemas/README.md``.
"""

from facestream.schemas._fields import SCHEMA_VERSION
from facestream.schemas.detection import (
    DetectionEvent,
    Face,
    ModelRef,
    decode_detection,
    encode_detection,
    event_id_for,
)
from facestream.schemas.errors import SchemaError
from facestream.schemas.frame import Frame, decode_frame, encode_frame

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
    "decode_detection",
    "decode_frame",
    "encode_detection",
    "encode_frame",
    "event_id_for",
]
