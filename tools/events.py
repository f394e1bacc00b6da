"""``facestream events``: print detection events as they arrive, one line each (or JSON)."""

from facestream.schemas import DETECTIONS_TOPIC, DetectionEvent, unpack_detection
from facestream.tools.viewer import viewer_command


def describe(event: DetectionEvent) -> str:
    latency_ms = (event.detect_ts_ns - event.capture_ts_ns) / 1e6
    faces = " ".join(
        f"[{face.score:.2f} @ {int(face.box[0])},{int(face.box[1])} {int(face.box[2] - face.box[0])}x"
        f"{int(face.box[3] - face.box[1])}]"
        for face in event.faces
    )
    return (
        f"{event.camera_id:<10} seq {event.frame_seq:<16} {event.width}x{event.height} "
        f"{len(event.faces)} face(s) {faces or '-'}  capture->detect {latency_ms:.0f} ms  ({event.model.name})"
    )


events = viewer_command("events", DETECTIONS_TOPIC, "detection events", unpack_detection, describe)
