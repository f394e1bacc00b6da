"""One config object per service: a frozen dataclass whose fields are the single source of every
default, type and check. The command line is made from it, so a flag, an environment variable
(``FACESTREAM_<COMMAND>_<OPTION>``, click's ``auto_envvar_prefix``) and a TOML table all pass the same
click types, and code that builds the object directly (tests, benchmarks) passes the same checks::

    @dataclass(frozen=True)
    class DetectorConfig:
        batch: int = setting(8, "Frames per inference (poll size).", minimum=1)

        def __post_init__(self) -> None:
            check(self)

    @click.command()
    @options(DetectorConfig)
    def detect(**values): DetectorConfig(**values)
"""

import dataclasses
import functools
import json
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from facestream.errors import ConfigError
from facestream.kafka_clients import SESSION_TIMEOUT_S
from facestream.text_limits import Checked, check_for, parse_topic

Parse = Callable[[str], Any]  # text -> value; raises ValueError with a sentence for the user
Show = Callable[[Any], str]  # value -> the text its Parse reads back


@dataclass(frozen=True)
class Setting:
    """What a field means to a user: its help, and the values it accepts."""

    help: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] | None = None
    parse: Parse | None = None  # for values typed as text (WIDTHxHEIGHT, hw/keep): parses and checks
    show: Show = str  # a value as text, for command lines and for checking a value given as such
    metavar: str = "TEXT"  # how --help shows a parsed value
    flag: bool = False  # a bool shown as --name / no value
    off: str | None = None  # a flag's second name, which sets it false (--merge-heads/--separate-heads)
    repeat: bool = False  # a tuple given one item per option (--cuda-option A=1 --cuda-option B=2)
    option: str | None = None  # the option's name where it is not the field's (--batch for ``batches``)
    was: str | None = None  # the field's name before a rename: its option, variable and key still work, with a warning


def setting(
    default: Any,
    help: str,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    choices: tuple[str, ...] | None = None,
    parse: Parse | None = None,
    show: Show = str,
    metavar: str = "TEXT",
    off: str | None = None,
    option: str | None = None,
    was: str | None = None,
) -> Any:
    """A dataclass field with its default and what ``check`` and ``options`` need to know."""
    flag = isinstance(default, bool)
    meta = Setting(help, minimum, maximum, choices, parse, show, metavar, flag=flag, off=off, option=option, was=was)
    return dataclasses.field(default=default, metadata={"setting": meta})


def repeated(help: str, parse: Parse = str, show: Show = str, metavar: str = "TEXT", option: str | None = None) -> Any:
    """A tuple field given as a repeatable option, one item each (``parse`` and ``show`` one item); none
    by default."""
    meta = Setting(help, parse=parse, show=show, metavar=metavar, repeat=True, option=option)
    return dataclasses.field(default=(), metadata={"setting": meta})


def option_name(f: dataclasses.Field, meta: Setting) -> str:
    """The field's option on the command line: ``--field-name`` unless its setting names another."""
    return meta.option or "--" + f.name.replace("_", "-")


def _settings(cls: type) -> list[tuple[dataclasses.Field, Setting, type, bool]]:
    """(field, setting, base type, optional) per field that has a setting, in declaration order."""
    hints = typing.get_type_hints(cls)
    found = []
    for f in dataclasses.fields(cls):
        meta = f.metadata.get("setting")
        if meta is None:
            continue
        kind, optional = hints[f.name], False
        if isinstance(kind, types.UnionType) and type(None) in typing.get_args(kind):
            kind, optional = next(a for a in typing.get_args(kind) if a is not type(None)), True
        found.append((f, meta, typing.get_origin(kind) or kind, optional))
    return found


def check(config: Any) -> None:
    """Every field against its type and setting; ConfigError names the option and the value."""
    for f, meta, kind, optional in _settings(type(config)):
        value: Any = getattr(config, f.name)
        name = option_name(f, meta)
        if value is None:
            if not optional:
                raise ConfigError(f"{name} needs a value")
            continue
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
            object.__setattr__(config, f.name, value)
        if not _is_a(value, kind):
            raise ConfigError(f"{name} must be {kind.__name__}, got {value!r}")
        if meta.repeat:
            _check_items(name, meta, value)
            continue
        if meta.minimum is not None and value < meta.minimum:
            raise ConfigError(f"{name} must be >= {meta.minimum:g}, got {value!r}")
        if meta.maximum is not None and value > meta.maximum:
            raise ConfigError(f"{name} must be <= {meta.maximum:g}, got {value!r}")
        if meta.choices is not None and value not in meta.choices:
            raise ConfigError(f"{name} must be one of {', '.join(meta.choices)}, got {value!r}")
        parse = _parse_of(f, meta, kind)
        if parse is not None:  # text as the command line would give it, parsed and checked
            try:
                parse(meta.show(value))
            except ValueError as exc:
                raise ConfigError(f"{name}: {exc}") from None


def _parse_of(f: dataclasses.Field, meta: Setting, kind: type) -> Parse | None:
    """How a field's text is checked: its setting's parse, or for plain text the limit its name calls
    for (``text_limits``: a topic, an id, a path, any text)."""
    if meta.parse is None and kind is str and meta.choices is None:
        return check_for(f.name)
    return meta.parse


def _check_items(name: str, meta: Setting, items: tuple) -> None:
    """Each item of a repeated option, as its own option would be checked."""
    if meta.parse is None:
        return
    for item in items:
        try:
            meta.parse(meta.show(item))
        except ValueError as exc:
            raise ConfigError(f"{name}: {exc}") from None


def _is_a(value: Any, kind: type) -> bool:
    """Whether ``value`` is of the field's type (a bool is not an int here)."""
    return isinstance(value, kind) and (kind is bool or not isinstance(value, bool))


def parse_size(text: str) -> tuple[int, int]:
    """``WIDTHxHEIGHT`` (e.g. 640x480) -> (width, height), both >= 1."""
    try:
        width, height = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise ValueError(f"expected WIDTHxHEIGHT, e.g. 640x480, got {text!r}") from None
    if width < 1 or height < 1:
        raise ValueError(f"width and height must be >= 1, got {text!r}")
    return width, height


DURATION_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def parse_duration(text: str) -> float:
    """``30s``, ``5m``, ``2h``, ``1d``, ``250ms`` -> seconds (> 0)."""
    number = text.rstrip("abcdefghijklmnopqrstuvwxyz")
    unit = text[len(number) :]
    try:
        seconds = float(number) * DURATION_UNITS[unit]
    except (ValueError, KeyError):
        raise ValueError(f"expected a duration such as 30s, 5m, 2h or 1d, got {text!r}") from None
    if seconds <= 0:
        raise ValueError(f"a duration must be > 0, got {text!r}")
    return seconds


START_POINTS = ("earliest", "latest")  # or a duration back from now


def parse_start_at(text: str) -> str:
    """``earliest``, ``latest`` or a duration (``5m``), as ``--start-at`` takes it."""
    if text not in START_POINTS:
        parse_duration(text)
    return text


def start_back_s(start_at: str) -> float | None:
    """For a ``--start-at`` duration, its seconds; None for earliest and latest."""
    return None if start_at in START_POINTS else parse_duration(start_at)


def show_size(size: tuple[int, int]) -> str:
    """(width, height) -> ``WIDTHxHEIGHT``, as ``parse_size`` reads it."""
    return "x".join(map(str, size))


def json_object(text: str) -> dict:
    """A JSON object's text (or a TOML table, which options receive as such) -> a dict; ValueError else."""
    try:
        values = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f'expected a JSON object, e.g. {{"name": 1}}: {exc}') from None
    if not isinstance(values, dict):
        raise ValueError(f"expected a JSON object, got {text!r}")
    return values


def names(text: str) -> tuple[str, ...]:
    """``a, b,c`` -> ("a", "b", "c"): a comma-separated list, blanks dropped."""
    return tuple(n.strip() for n in text.split(",") if n.strip())


def parse_topics(text: str) -> tuple[str, ...]:
    """``frames,frames.corridor`` -> the topic names (at least one, each as Kafka takes it)."""
    topics = names(text)
    if not topics:
        raise ValueError(f"expected topic names separated by commas, got {text!r}")
    return tuple(parse_topic(topic) for topic in topics)


def tables_of(cls: type, what: str) -> Parse:
    """A Parse for a JSON object (or TOML tables) of name -> some of ``cls``'s settings, each checked by
    ``table_of``; an error names the entry as ``what`` (e.g. ``camera 'gate': ...``)."""
    one = table_of(cls)

    def parse(text: str) -> dict:
        entries = json_object(text)
        for name, fields in entries.items():
            try:
                one(json.dumps(fields))
            except ValueError as exc:
                raise ValueError(f"{what} {name!r}: {exc}") from None
        return entries

    parse.__name__ = f"{cls.__name__} tables"
    return parse


def table_of(cls: type) -> Parse:
    """A Parse for a JSON object (or a TOML table) of some of ``cls``'s settings: unknown keys and bad
    values are errors naming them; the result is the dict of the settings given."""

    def parse(text: str) -> dict:
        values = {key.replace("-", "_"): value for key, value in json_object(text).items()}
        known = [f.name for f in dataclasses.fields(cls)]
        unknown = sorted(set(values) - set(known))
        if unknown:
            raise ValueError(f"unknown setting(s) {', '.join(unknown)}; known: {', '.join(known)}")
        try:
            cls(**values)
        except ConfigError as exc:
            raise ValueError(str(exc)) from None
        return values

    parse.__name__ = f"{cls.__name__} settings"
    return parse


def parsed(parse: Parse, metavar: str) -> click.ParamType:
    """A click type for an option outside any config object (e.g. a benchmark's) from a ``Parse``."""
    return _Parsed(parse, keep_text=False, metavar=metavar)


class _Parsed(click.ParamType):
    """A click type from a ``Parse`` function: its ValueError becomes a usage error (exit 2)."""

    def __init__(self, parse: Parse, keep_text: bool, metavar: str) -> None:
        self.parse, self.keep_text, self.metavar = parse, keep_text, metavar
        self.name = parse.__name__

    def get_metavar(self, *_args, **_kwargs) -> str:
        return self.metavar

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, dict):  # a TOML table, as a JSON object on the command line would give it
            value = json.dumps(value)
        if not isinstance(value, str):
            return value
        try:
            parsed = self.parse(value)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)
        return value if self.keep_text else parsed


def _click_type(f: dataclasses.Field, meta: Setting, kind: type) -> click.ParamType | type:
    if meta.repeat:  # each item parsed on its own
        return _Parsed(meta.parse or check_for(f.name), keep_text=False, metavar=meta.metavar)
    if meta.choices is not None:
        return click.Choice(meta.choices)
    parse = _parse_of(f, meta, kind)
    if parse is not None:  # a text field keeps its text (checked); any other gets the parsed value
        return _Parsed(parse, keep_text=kind is str, metavar=meta.metavar)
    if kind is int:
        low, high = (None if bound is None else int(bound) for bound in (meta.minimum, meta.maximum))
        return click.IntRange(low, high)
    if kind is float:
        return click.FloatRange(meta.minimum, meta.maximum)
    if kind is Path:
        return Checked(click.Path(path_type=Path), check_for("path"))
    return kind


def options(cls: type, only: tuple[str, ...] | None = None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A decorator adding one click option per field of ``cls`` (or of the fields named in ``only``).

    A renamed field (``was``) also gets its old option, hidden: given as a flag, an environment
    variable or a config-file key, it sets the new one, with a warning."""

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        chosen = [s for s in _settings(cls) if only is None or s[0].name in only]
        renamed = {meta.was: f.name for f, meta, _kind, _optional in chosen if meta.was}
        if renamed:
            command = _taking_old_names(command, renamed)
        for f, meta, kind, _optional in reversed(chosen):
            if meta.was:
                old = click.option(
                    "--" + meta.was.replace("_", "-"), meta.was, type=_click_type(f, meta, kind), hidden=True
                )
                command = old(command)
            name = option_name(f, meta)
            if meta.flag:
                declared = f"{name}/--{meta.off}" if meta.off else name
                command = click.option(declared, f.name, is_flag=True, default=f.default, help=meta.help)(command)
                continue
            if meta.repeat:
                repeatable = click.option(name, f.name, type=_click_type(f, meta, kind), multiple=True, help=meta.help)
                command = repeatable(command)
                continue
            # A parsed value's default is given as its text: --help shows it as typed, and it parses back.
            default = meta.show(f.default) if meta.parse is not None and f.default is not None else f.default
            command = click.option(name, f.name, type=_click_type(f, meta, kind), default=default, help=meta.help)(
                command
            )
        return command

    return decorate


def _taking_old_names(command: Callable[..., Any], renamed: dict[str, str]) -> Callable[..., Any]:
    """``command`` taking each old name's value (when given) as its new name's, and saying so."""

    @functools.wraps(command)
    def run(**values: Any) -> Any:
        for old, new in renamed.items():
            value = values.pop(old, None)
            if value is not None:
                warn_renamed(old, new)
                values[new] = value
        return command(**values)

    run.renamed = {**getattr(command, "renamed", {}), **renamed}  # type: ignore[attr-defined]
    return run


def renamed_options(command: click.Command) -> dict[str, str]:
    """Old name -> new name of every renamed option of ``command`` (for config-file keys)."""
    return getattr(command.callback, "renamed", {})


def warn_renamed(old: str, new: str) -> None:
    dashed, now = old.replace("_", "-"), new.replace("_", "-")
    click.echo(f"WARNING: --{dashed} (or its variable or key) is now --{now}; the old name will go", err=True)


def command_line(config: Any, **changes: Any) -> list[str]:
    """The flags that make ``config`` (with ``changes``) from its command: only those differing from
    the defaults, so the line stays readable. The inverse of ``options``."""
    config = dataclasses.replace(config, **changes)
    args: list[str] = []
    for f, meta, _kind, _optional in _settings(type(config)):
        value = getattr(config, f.name)
        if value == f.default:
            continue
        name = option_name(f, meta)
        if meta.flag:
            args.append(name if value else f"--{meta.off}")
        elif meta.repeat:
            args += [arg for item in value for arg in (name, meta.show(item))]
        else:
            args += [name, meta.show(value)]
    return args


def session_timeout(member: str) -> Any:
    """The ``session_timeout_s`` setting of a service whose processes share a consumer group (one wording
    and one default for all of them)."""
    return setting(
        SESSION_TIMEOUT_S,
        f"A {member} that stops answering (killed, hung, cut off) loses its partitions to the group's others "
        "after this many seconds (Kafka's brokers accept 6 and more by default; librdkafka's own default is 45).",
        minimum=1.0,
    )


def http_port_setting(ready_when: str, was: str | None = None) -> Any:
    """A service's ``http_port``: its /metrics, /healthz and /readyz (ready when ``ready_when``)."""
    return setting(
        0,
        f"Serve /metrics (Prometheus), /healthz (alive) and /readyz ({ready_when}) on this port (0: off).",
        minimum=0,
        maximum=65535,
        was=was,
    )


def http_host_setting(was: str | None = None) -> Any:
    """A service's ``http_host``: where those endpoints listen."""
    return setting("127.0.0.1", "Address those endpoints listen on (0.0.0.0: every interface).", was=was)


def stats_interval_setting(default: float) -> Any:
    """A service's ``stats_interval_s``."""
    return setting(default, "Seconds between stats lines (0: off).", minimum=0, was="stats_interval")


def stop_after_idle_setting(without: str) -> Any:
    """A service's ``stop_after_idle_s``: for tests and batch jobs, counted from its latest assignment."""
    return setting(
        None,
        f"Stop after this many seconds without {without}, once assigned (tests, batch jobs).",
        minimum=0,
        was="stop_after_idle",
    )


def settings_table(cls: type) -> str:
    """A Markdown table of ``cls``'s settings (name, default, meaning), as the docs show them."""
    rows = ["| setting | default | meaning |", "|---|---|---|"]
    for f, meta, _kind, _optional in _settings(cls):
        default = "-" if f.default in (None, ()) else meta.show(f.default)
        rows.append(f"| `{option_name(f, meta)[2:]}` | {default} | {meta.help} |")
    return "\n".join(rows)
