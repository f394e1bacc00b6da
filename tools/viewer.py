"""What the message viewers (``facestream events``, ``facestream alerts``) share: their options, and
printing a topic's messages as they arrive, one line each or one JSON object each."""

import json
import time
from collections.abc import Callable

import click


def viewer_options(default_topic: str, what: str) -> Callable:
    """The options every viewer takes, ``what`` naming its messages (e.g. "events")."""

    def decorate(command: Callable) -> Callable:
        for option in reversed(
            [
                click.option("--topic", default=default_topic),
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
) -> None:
    """Print ``topic``'s messages as they arrive until ``max_count`` or ``duration``; an unreadable one
    is reported on stderr with where it is, and skipped."""
    from facestream import kafka_clients
    from facestream.schemas import SchemaError

    kafka_clients.check_reachable()
    seen, end = 0, None if duration is None else time.monotonic() + duration

    def done() -> bool:
        return (max_count is not None and seen >= max_count) or (end is not None and time.monotonic() >= end)

    for msg in kafka_clients.records(topic, done, from_beginning):
        try:
            message = unpack(msg.value())
        except SchemaError as exc:
            click.echo(f"unreadable message at {msg.topic()}/{msg.partition()}@{msg.offset()}: {exc}", err=True)
            continue
        seen += 1
        click.echo(json.dumps(message.fields()) if as_json else describe(message))
