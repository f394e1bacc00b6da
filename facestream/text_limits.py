"""What text an option may hold, checked when the options are parsed: the limits the contract (ids and
names of 255 characters), Kafka (topic names) and the system (paths) would apply later, after a model
loaded or a connection opened, as a traceback. A bad value is one line and exit 2 instead.

The check follows the option's name, so a new option is checked without being declared anywhere:
topics by Kafka's rule, ids and names by the contract's, paths by the system's, any other text up to
``TEXT_MAX`` characters. ``checked_texts`` gives every text option of a command its check;
``facestream.config`` checks the text settings of the config objects the same way.
"""

import re
from collections.abc import Callable

import click

from facestream.schemas import ID_MAX

TEXT_MAX = 1000  # characters of any other text option: a URL, a host, a JSON table is shorter
PATH_MAX = 4096  # the longest path Linux takes
TOPIC = re.compile(r"[A-Za-z0-9._-]{1,249}")  # Kafka's rule for a topic name
IDS = ("camera", "cameras", "name", "names", "person", "alert_id", "group")  # names whose values go in records


def parse_topic(text: str) -> str:
    """A Kafka topic name, as the broker would take it."""
    if not TOPIC.fullmatch(text):
        shown = text if len(text) <= 60 else f"{text[:60]}... ({len(text)} characters)"
        raise ValueError(f"a topic name is 1-249 letters, digits, '.', '_' and '-', got {shown!r}")
    return text


def longest(most: int, what: str, split: bool = False) -> Callable[[str], str]:
    """A Parse for text of at most ``most`` characters (``split``: each comma-separated part)."""

    def parse(text: str) -> str:
        parts = text.split(",") if split else [text]
        over = next((part for part in parts if len(part) > most), None)
        if over is not None:
            raise ValueError(f"{what} is at most {most} characters, got {len(over)}")
        return text

    return parse


def check_for(name: str) -> Callable[[str], str]:
    """The check of a text option named ``name`` (its Python name: ``frames_topic``, ``cameras``)."""
    if name.endswith("topic"):  # some take several, comma-separated (frames,frames.corridor)
        return lambda text: ",".join(parse_topic(part.strip()) for part in text.split(","))
    if name in IDS:
        return longest(ID_MAX, "an id or name", split=name.endswith("s"))
    if name in ("out", "folder", "path") or name.endswith(("_dir", "_file", "_path")):
        return longest(PATH_MAX, "a path")
    return longest(TEXT_MAX, "a text option")


class Checked(click.ParamType):
    """A text (or path) option's type, checked by its name's rule before its own conversion."""

    def __init__(self, inner: click.ParamType, check: Callable[[str], str]) -> None:
        self.inner, self.check, self.name = inner, check, inner.name

    def get_metavar(self, *args, **kwargs) -> str | None:
        return self.inner.get_metavar(*args, **kwargs)

    def convert(self, value, param: click.Parameter | None, ctx: click.Context | None):
        if isinstance(value, str):
            try:
                self.check(value)
            except ValueError as exc:
                self.fail(str(exc), param, ctx)
        return self.inner.convert(value, param, ctx)


def checked_texts(command: click.Command) -> click.Command:
    """``command`` (and a group's commands) with each plain text or path parameter checked by its
    name's rule; a parameter checked already is left as it is."""
    for param in command.params:
        if param.name and isinstance(param.type, (click.types.StringParamType, click.Path)):
            param.type = Checked(param.type, check_for(param.name))
    for sub in getattr(command, "commands", {}).values():
        checked_texts(sub)
    return command
