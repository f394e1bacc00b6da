"""``facestream events``: print detection events as they arrive, one line each (or JSON)."""

import click

from facestream.schemas import DETECTIONS_TOPIC, DetectionEvent
from facestream.tools.viewer import show, viewer_options


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


@click.command(
    epilog="\b\nExamples:\n  facestream events\n  facestream events --from-beginning --json --max 10\n"
    "  facestream events --camera door --camera gate",
    context_settings={"show_default": True},
)
@viewer_options(DETECTIONS_TOPIC, "events")
def events(
    topic: str,
    cameras: tuple[str, ...],
    from_beginning: bool,
    as_json: bool,
    max_count: int | None,
    duration: float | None,
) -> None:
    """Print detection events from Kafka as they arrive (Ctrl-C to stop)."""
    from facestream.schemas import unpack_detection

    show(topic, unpack_detection, describe, from_beginning, as_json, max_count, duration, cameras)
