"""The ``facestream`` command. Subcommands load on first use, so ``facestream --help`` stays fast.

Every option can also come from an environment variable (``FACESTREAM_<COMMAND>_<OPTION>``, shown
in each ``--help``) or from a TOML config file with one table per command (``--config``); Kafka
client settings for every command come from ``--kafka``, a ``[kafka]`` table or a properties file
(``facestream.kafka_settings``).
"""

import importlib
import tomllib
from pathlib import Path

import click

from facestream import __version__, command, extras, kafka_settings, logs
from facestream.config import renamed_options, warn_renamed
from facestream.errors import ConfigError
from facestream.text_limits import checked_texts

SUBCOMMANDS = {
    "kafka": "facestream.tools.kafka:kafka",
    "produce": "facestream.producers.cli:produce",
    "detect": "facestream.detector_service.cli:detect",
    "pose": "facestream.detector_service.cli:pose",
    "models": "facestream.detector_service.cli:models",
    "samples": "facestream.tools.samples:samples",
    "events": "facestream.tools.events:events",
    "gallery": "facestream.tools.gallery:gallery",
    "demo": "facestream.tools.demo:demo",
    "alerting": "facestream.alerting.cli:alerting",
    "alerts": "facestream.tools.alerts:alerts",
    "alert-store": "facestream.alert_store.cli:alert_store",
    "notify": "facestream.notifier.cli:notify",
    "dashboard": "facestream.tools.dashboard:dashboard",
    "search": "facestream.tools.search:search",
    "users": "facestream.tools.users:users",
    "export": "facestream.tools.export.cli:export",
    "config": "facestream.tools.config_show:config",
}
KAFKA_TABLE = "kafka"  # the TOML table of Kafka client settings (facestream.kafka_settings), not a command


class LazyGroup(click.Group):
    """A group whose subcommands are imported only when named (or listed in --help)."""

    def __init__(self, *args, lazy: dict[str, str], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = lazy

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.lazy:
            module, attr = self.lazy[name].split(":")
            try:
                return checked_texts(getattr(importlib.import_module(module), attr))
            except ModuleNotFoundError as exc:
                sentence = extras.missing_extra(exc, name)
                if sentence is None:
                    raise
                return _not_installed(name, sentence)
        return super().get_command(ctx, name)

    def invoke(self, ctx: click.Context):
        """A module of an extra this install lacks, imported only once the command runs (as the
        services import their engines): the same one sentence, naming the command's extra."""
        try:
            return super().invoke(ctx)
        except ModuleNotFoundError as exc:
            sentence = extras.missing_extra(exc, ctx.invoked_subcommand)
            if sentence is None:
                raise
            raise ConfigError(f"facestream {ctx.invoked_subcommand}: {sentence}") from None


def _not_installed(name: str, sentence: str) -> click.Command:
    """A command whose extra this install lacks: listed by ``--help`` as such, and any use of it (its
    own ``--help`` included) is the one sentence that says what to install."""

    def refuse(args: tuple[str, ...]) -> None:
        raise ConfigError(f"facestream {name}: {sentence}")

    return click.Command(
        name,
        callback=refuse,
        params=[click.Argument(["args"], nargs=-1, type=click.UNPROCESSED)],
        short_help=f"(not installed: {sentence.rsplit(': ', 1)[1]})",
        add_help_option=False,
        context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
    )


def load_config(path: Path) -> dict:
    """TOML file -> click's default_map: ``[detect] batch = 16`` sets ``detect --batch``, and
    ``[models.build-engine]`` a subcommand's option. A table or key no command has is an error that
    names it and the valid ones: a misspelt key must not be ignored silently."""
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read config file {path}: {exc}") from None
    kafka = data.pop(KAFKA_TABLE, {})
    if not isinstance(kafka, dict) or any(isinstance(v, dict | list) for v in kafka.values()):
        raise ConfigError(f'{path}: [{KAFKA_TABLE}] takes librdkafka properties, e.g. "security.protocol" = "SSL"')
    kafka_settings.add({k: _property(v) for k, v in kafka.items()}, f"{path} [{KAFKA_TABLE}]")
    unknown = set(data) - set(SUBCOMMANDS)
    if unknown:
        raise ConfigError(f"{path}: unknown section(s) {sorted(unknown)}; known: {sorted(SUBCOMMANDS)}")
    defaults = {name: _defaults(path, name, _subcommand(name), table) for name, table in data.items()}
    for key in ("zones", "lines"):  # one place to write a camera's zones and lines
        drawn = _alerting_cameras(data, key)
        if drawn and key not in defaults.get("dashboard", {}):
            defaults.setdefault("dashboard", {})[key] = drawn
    return defaults


def _alerting_cameras(data: dict, key: str) -> dict:
    """camera -> its ``key`` (zones, lines), as the file gives them to the alerting service (the
    dashboard draws the same)."""
    cameras = data.get("alerting", {}).get("cameras") or {}
    return {camera: own[key] for camera, own in cameras.items() if isinstance(own, dict) and own.get(key)}


def _property(value) -> str:
    """A TOML value as librdkafka spells it (true/false, numbers as text)."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def _subcommand(name: str) -> click.Command:
    command = cli.get_command(click.Context(cli), name)
    assert command is not None  # the names were checked against SUBCOMMANDS
    return command


def _defaults(path: Path, where: str, command: click.Command, table: dict) -> dict:
    """One TOML table checked against ``command``'s options (or a group's subcommands)."""
    if isinstance(command, click.Group):
        nested = {}
        for key, value in table.items():
            sub = command.commands.get(key)
            if sub is None or not isinstance(value, dict):
                valid = ", ".join(f"[{where}.{name}]" for name in sorted(command.commands))
                raise ConfigError(f"{path}: [{where}] has no table {key!r}; valid: {valid}")
            nested[key] = _defaults(path, f"{where}.{key}", sub, value)
        return nested
    known = {p.name for p in command.params if isinstance(p, click.Option) and p.name != "help" and not p.hidden}
    renamed = renamed_options(command)
    values = {}
    for key, value in table.items():
        name = key.replace("-", "_")
        if name in renamed:  # an old key: read as the new one, so every reader of the table sees one name
            warn_renamed(name, renamed[name])
            name = renamed[name]
        if name not in known:
            valid = ", ".join(sorted(n.replace("_", "-") for n in known))
            raise ConfigError(f"{path}: [{where}] has no key {key!r}; valid keys: {valid}")
        values[name] = value
    return values


@click.group(
    cls=LazyGroup,
    lazy=SUBCOMMANDS,
    context_settings={"auto_envvar_prefix": "FACESTREAM", "show_default": True, "help_option_names": ["-h", "--help"]},
    epilog="""\b
Examples:
  facestream demo                          # everything, live, on this machine
  facestream kafka start                   # a local Apache Kafka broker
  facestream produce --camera door --source door.mp4 --fps 15
  facestream detect --model yunet --group detectors --batch 16
  facestream events                        # print detection events as they arrive
""",
)
@click.option(
    "--config",
    type=click.Path(dir_okay=False, path_type=Path),
    envvar="FACESTREAM_CONFIG",
    help="TOML file with one table per command, e.g. [detect] batch = 16.",
)
@click.option(
    "--kafka",
    "kafka_pairs",
    multiple=True,
    metavar="KEY=VALUE",
    help="A Kafka client setting for every client (librdkafka property, e.g. security.protocol=SASL_SSL); "
    "repeatable. Also: [kafka] in --config, and a properties file in FACESTREAM_KAFKA_CONFIG.",
)
@click.option("-v", "--verbose", is_flag=True, help="Debug logging.")
@click.version_option(__version__, prog_name="facestream")
@click.pass_context
def cli(ctx: click.Context, config: Path | None, kafka_pairs: tuple[str, ...], verbose: bool) -> None:
    """Kafka-based face detection for many camera streams."""
    logs.setup(verbose)
    if config is not None:
        ctx.default_map = load_config(config)
    try:
        pairs = dict(kafka_settings.parse_pair(pair) for pair in kafka_pairs)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--kafka") from None
    if pairs:
        kafka_settings.add(pairs, "--kafka")
    sub = ctx.invoked_subcommand
    if sub:
        command.check_environment(cli.get_command(ctx, sub), f"FACESTREAM_{sub.upper().replace('-', '_')}")


def main() -> None:
    """The ``facestream`` console script."""
    command.run(cli, env_prefix="FACESTREAM", setup_logging=False)  # the group's callback sets logging up
