"""The contract between facestream's services: message types, their codecs, their one error.

Every reader rejects a newer major ``schema_version`` and ignores fields it does not know, so
producers may add fields without breaking older consumers. See ``schemas/README.md``.
"""

from facestream.schemas._fields import ID_MAX, SCHEMA_VERSION
from facestream.schemas.alert import REASON_MAX, ZONE_MAX, Alert, Sighting, alert_id_for, pack_alert, unpack_alert
from facestream.schemas.camera_status import (
    ACTIVE_STATES,
    CAMERA_STATES,
    CameraStatus,
    pack_camera_status,
    unpack_camera_status,
)
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
from facestream.schemas.gallery import GalleryEntry, pack_gallery_entry, person_id_for, unpack_gallery_entry
from facestream.schemas.pose import KEYPOINT_NAMES, Person, PoseEvent, pack_pose, unpack_pose

FRAMES_TOPIC = "frames"
DETECTIONS_TOPIC = "detections"
DEAD_LETTER_TOPIC = "frames.dlq"
POSES_TOPIC = "poses"
ALERTS_TOPIC = "alerts"
CAMERA_STATUS_TOPIC = "camera-status"  # the producers' word on each camera, for the offline rule and the page
GALLERY_TOPIC = "faces.gallery"  # compacted: the last entry per person, a tombstone removes one

__all__ = [
    "ACTIVE_STATES",
    "ALERTS_TOPIC",
    "Alert",
    "CAMERA_STATES",
    "CAMERA_STATUS_TOPIC",
    "CameraStatus",
    "DEAD_LETTER_TOPIC",
    "DETECTIONS_TOPIC",
    "DetectionEvent",
    "FRAMES_TOPIC",
    "Face",
    "Frame",
    "GALLERY_TOPIC",
    "GalleryEntry",
    "ID_MAX",
    "KEYPOINT_NAMES",
    "ModelRef",
    "POSES_TOPIC",
    "Person",
    "REASON_MAX",
    "PoseEvent",
    "SCHEMA_VERSION",
    "SchemaError",
    "Sighting",
    "ZONE_MAX",
    "alert_id_for",
    "event_id_for",
    "pack_alert",
    "pack_camera_status",
    "pack_detection",
    "pack_frame",
    "pack_gallery_entry",
    "pack_pose",
    "person_id_for",
    "unpack_alert",
    "unpack_camera_status",
    "unpack_detection",
    "unpack_frame",
    "unpack_gallery_entry",
    "unpack_pose",
]
