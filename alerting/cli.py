"""``facestream alerting``: run an alerting worker (start more to share the work)."""

import click

from facestream.alerting.config import AlertingConfig
from facestream.alerting.rules.registry import REGISTRY
from facestream.config import options


def rules_help() -> str:
    """The rules and what makes each alert, from the registry (``--rules`` picks among them)."""
    lines = [f"  {rule.name:<15} {rule.summary}{'' if rule.default else ' (not by default)'}" for rule in REGISTRY]
    return "\b\nRules (--rules; by default all but those marked):\n" + "\n".join(lines) + "\n\n"


@click.command(
    epilog=rules_help()
    + """\b
Examples:
  facestream alerting                                  # the default rules
  facestream alerting --rules stranger
  facestream alerting --crowd '{"min_faces": 3}'
  facestream alerting --fall '{"hold_s": 3}'
  facestream --config facestream.toml alerting         # [alerting], [alerting.cameras.gate], ...
""",
    context_settings={"show_default": True},
)
@options(AlertingConfig)
def alerting(**values) -> None:
    """Turn detection and pose events and camera statuses into alerts, as a worker of one consumer
    group (start more to share the work)."""
    from facestream.alerting.app import run

    run(AlertingConfig(**values))
