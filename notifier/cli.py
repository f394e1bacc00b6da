"""``facestream notify``: send alerts to people, under rules per target."""

import click

from facestream.config import options
from facestream.notifier.config import NotifierConfig


@click.command(
    epilog="""\b
Examples:
  facestream notify --targets '{"phone": {"url": "ntfy://ntfy.sh/my-cameras"}}'
  facestream notify --targets '{"ops": {"url": "mailto://user:pass@mail.example.com?to=ops@example.com",
                                        "kinds": "fall,camera_offline", "cooldown_s": 300}}'
  facestream notify --dashboard-url http://nvr:8080 --targets '{"ha": {"url": "mqtt://broker/facestream"}}'
  facestream --config facestream.toml notify              # [notify.targets.phone] url = "..."
""",
    context_settings={"show_default": True},
)
@options(NotifierConfig)
def notify(**values) -> None:
    """Send alerts to people through Apprise (ntfy, Slack, Telegram, e-mail, webhooks, MQTT, ...), each
    target with its kinds, cameras, states, cooldown, hourly cap and quiet hours; at least once, never twice."""
    from facestream.notifier.service import run

    run(NotifierConfig(**values))
