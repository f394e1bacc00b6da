"""What the message viewers (``facestream events``, ``facestream alerts``) share: their options, and
printing a topic's messages as they arrive, one line each or one JSON object each."""

import base64
import json
import time
from collections.abc import Callable

import click


def viewer_command(name: str, default_topic: str, what: str, unpack: Callable, describe: Callable) -> click.Command:
    """``facestream NAME``: print ``what`` (events, alerts) from ``default_topic`` as they arrive."""

    @click.command(
        name=name,
        help=f"Print {what} from Kafka as they arrive (Ctrl-C to stop).",
        epilog=f"\b\nExamples:\n  facestream {name}\n  facestream {name} --from-beginning --json --max 10\n"
        f"  facestream {name} --camera door --camera gate",
        context_settings={"show_default": True},
    )
    @viewer_options(default_topic, what)
    def command(
        topic: str,
        cameras: tuple[str, ...],
        from_beginning: bool,
        as_json: bool,
        max_count: int | None,
        duration: float | None,
    ) -> None:
        show(topic, unpack, describe, from_beginning, as_json, max_count, duration, cameras)

    return command


def viewer_options(default_topic: str, what: str) -> Callable:
    """The options every viewer takes, ``what`` naming its messages (e.g. "events")."""

    def decorate(command: Callable) -> Callable:
        for option in reversed(
            [
                click.option("--topic", default=default_topic),
                click.option(
                    "--camera",
                    "cameras",
                    multiple=True,
                    metavar="ID",
                    help=f"Only the {what} of this camera (repeat for more; default: every camera).",
                ),
                click.option("--from-beginning", is_flag=True, help=f"Start at the oldest retained {what}."),
                click.option("--json", "as_json", is_flag=True, help="One JSON object per message, not a line."),
                click.option("--max", "max_count", type=click.IntRange(min=1), default=None, help="Stop after N."),
                click.option("--duration", type=click.FloatRange(min=0), default=None, help="Stop after N seconds."),
            ]
        ):
            command = option(command)
        return command

    return decorate


def show(
    topic: str,
    unpack: Callable,
    describe: Callable,
    from_beginning: bool,
    as_json: bool,
    max_count: int | None,
    duration: float | None,
    cameras: tuple[str, ...] = (),
) -> None:
    """Print ``topic``'s messages (of ``cameras`` only, if given) as they arrive until ``max_count`` or
    ``duration``; an unreadable one is reported on stderr with where it is, and skipped. Once its
    partitions are assigned, a line on stderr says that it reads, so a script knows when to send."""
    from facestream import kafka_clients, kafka_reading
    from facestream.schemas import SchemaError

    kafka_clients.check_reachable()
    seen, end = 0, None if duration is None else time.monotonic() + duration

    def done() -> bool:
        return (max_count is not None and seen >= max_count) or (end is not None and time.monotonic() >= end)

    def reading(consumer, partitions) -> None:
        """Pin "from now on" to each partition's end as of now (librdkafka would look it up at the
        first fetch, after this line), then say that the viewer reads."""
        if not from_beginning:
            for tp in partitions:
                tp.offset = consumer.get_watermark_offsets(tp, timeout=10)[1]
            consumer.assign(partitions)
        start = "from the oldest retained" if from_beginning else "from now on"
        only = f", cameras {', '.join(cameras)} only" if cameras else ""
        click.echo(f"reading {topic} ({len(partitions)} partitions) {start}{only}", err=True)

    for msg in kafka_reading.records(topic, done, from_beginning, on_assign=reading):
        try:
            message = unpack(msg.value())
        except SchemaError as exc:
            click.echo(f"unreadable message at {msg.topic()}/{msg.partition()}@{msg.offset()}: {exc}", err=True)
            continue
        if cameras and message.camera_id not in cameras:
            continue
        seen += 1
        click.echo(json.dumps(message.fields(), default=_as_json) if as_json else describe(message))


def _as_json(value: object) -> str:
    """Bytes (an embedding, a stranger's face) as base64, which JSON can carry."""
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    raise TypeError(f"{type(value).__name__} is not JSON")
