"""``facestream events``: print detection events as they arrive, one line each (or JSON)."""

import json
import time

import click

from facestream.schemas import DETECTIONS_TOPIC, DetectionEvent


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
    epilog="\b\nExamples:\n  facestream events\n  facestream events --from-beginning --json --max 10",
    context_settings={"show_default": True},
)
@click.option("--topic", default=DETECTIONS_TOPIC)
@click.option("--from-beginning", is_flag=True, help="Start at the oldest retained event, not the newest.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per event instead of a summary line.")
@click.option("--max", "max_events", type=click.IntRange(min=1), default=None, help="Stop after N events.")
@click.option("--duration", type=click.FloatRange(min=0), default=None, help="Stop after this many seconds.")
def events(topic: str, from_beginning: bool, as_json: bool, max_events: int | None, duration: float | None) -> None:
    """Print detection events from Kafka as they arrive (Ctrl-C to stop)."""
    from facestream import kafka_clients
    from facestream.schemas import SchemaError, unpack_detection

    kafka_clients.check_reachable()
    seen, end = 0, None if duration is None else time.monotonic() + duration

    def done() -> bool:
        return (max_events is not None and seen >= max_events) or (end is not None and time.monotonic() >= end)

    for msg in kafka_clients.records(topic, done, from_beginning):
        try:
            event = unpack_detection(msg.value())
        except SchemaError as exc:
            click.echo(f"unreadable event at {msg.topic()}/{msg.partition()}@{msg.offset()}: {exc}", err=True)
            continue
        seen += 1
        click.echo(json.dumps(event.fields()) if as_json else describe(event))
