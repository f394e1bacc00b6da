"""``facestream alerting``: run an alerting worker (start more to share the work)."""

import click

from facestream.alerting.config import AlertingConfig
from facestream.config import options


@click.command(
    epilog="""\b
Examples:
  facestream alerting                                  # stranger, crowd, fall and camera_offline rules
  facestream alerting --rules stranger
  facestream alerting --crowd '{"min_faces": 3}'
  facestream alerting --fall '{"hold_s": 3}'
  facestream --config facestream.toml alerting         # [alerting], [alerting.cameras.gate], ...
""",
    context_settings={"show_default": True},
)
@options(AlertingConfig)
def alerting(**values) -> None:
    """Turn detection and pose events and camera statuses into alerts (stranger, crowd, fall, camera_offline),
    as a worker of one consumer group."""
    from facestream.alerting.worker import run

    run(AlertingConfig(**values))
