"""``facestream config show``: the settings in force, as the services will see them, secrets masked."""

import click

from facestream import kafka_clients, kafka_settings
from facestream.notifier.config import masked
from facestream.redact import redact


@click.group()
def config() -> None:
    """The effective configuration."""


@config.command(
    epilog="""\b
Examples:
  facestream config show
  facestream --config facestream.toml config show
  FACESTREAM_KAFKA_CONFIG=client.properties facestream --kafka sasl.username=alice config show
"""
)
@click.pass_context
def show(ctx: click.Context) -> None:
    """Print the broker address, the Kafka client settings every client gets (from FACESTREAM_KAFKA_CONFIG,
    the config file's [kafka] table and --kafka; secrets masked) and the config file's command tables
    (credentials in camera URLs masked)."""
    click.echo(f"bootstrap: {kafka_clients.bootstrap_servers()}")
    click.echo("kafka settings:")
    for key, value in sorted(kafka_settings.masked(kafka_settings.load()).items()):
        click.echo(f"  {key} = {value}")
    for command, values in sorted((ctx.find_root().default_map or {}).items()):
        click.echo(f"[{command}]")
        for key, value in sorted(values.items()):
            click.echo(f"  {key} = {shown(command, key, value)}")


def shown(command: str, key: str, value) -> str:
    """A setting as ``config show`` prints it: secrets masked, and notification targets' URLs by their
    scheme only (Apprise keeps tokens anywhere in a URL, its path too)."""
    if kafka_settings.is_secret(key):
        return "********"
    if command == "notify" and key == "targets" and isinstance(value, dict):
        value = {name: {**target, "url": masked(str(target.get("url", "")))} for name, target in value.items()}
    return redact(str(value))
