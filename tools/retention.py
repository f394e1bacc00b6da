"""``facestream kafka retention``: how long the topics keep frames, events and alerts, read or set.
Kafka applies it (``retention.ms``); the admin page shows it beside the alert store's own retention."""

import click

from facestream.errors import ConfigError
from facestream.schemas import ALERTS_TOPIC, DETECTIONS_TOPIC, FRAMES_TOPIC, POSES_TOPIC

PIPELINE = (FRAMES_TOPIC, DETECTIONS_TOPIC, POSES_TOPIC, ALERTS_TOPIC)


def _days(value: float | str) -> str:
    if isinstance(value, str):
        return value
    return "forever" if value == float("inf") else f"{value:g} days"


@click.command(
    epilog="""\b
Examples:
  facestream kafka retention                          # the pipeline's topics, as the brokers keep them
  facestream kafka retention frames=1 detections=7    # frames a day, events with embeddings a week
  facestream kafka retention frames.corridor=0.5 alerts=forever
""",
)
@click.argument("changes", nargs=-1, metavar="[TOPIC=DAYS]...")
def retention(changes: tuple[str, ...]) -> None:
    """Show the topics' retention, or set it: frames and detection events (with their face embeddings)
    are biometric data, kept only as long as they are needed (docs/privacy.md)."""
    from facestream.kafka_topics import retention_days, set_retention_days

    wanted: dict[str, float] = {}
    for change in changes:
        topic, sep, days = change.partition("=")
        try:
            wanted[topic] = float("inf") if days == "forever" else float(days)
        except ValueError:
            sep = ""
        if not sep or not topic or wanted.get(topic, 1) <= 0:
            raise ConfigError(f"expected TOPIC=DAYS (days > 0, or forever), got {change!r}")
    if wanted:
        set_retention_days(wanted)
    for topic, kept in retention_days(list(wanted) or list(PIPELINE)).items():
        click.echo(f"{topic:<24} {_days(kept)}")
