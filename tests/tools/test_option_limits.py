"""A bad value on the command line is one line and exit 2, before any work: every option of every
command is given a value out of its range (a number past its bounds, a choice that is not one, text
longer than the contract, Kafka or the system would take) and must refuse it when the options are
parsed; two commands that once loaded a model or opened Kafka first run for real."""

import subprocess
import sys

import click
import pytest

from facestream.tools.cli import cli


def commands(command: click.Command = cli, path: tuple[str, ...] = ()):
    if isinstance(command, click.Group):
        context = click.Context(command)
        for name in command.list_commands(context):
            yield from commands(command.get_command(context, name), (*path, name))
    else:
        yield " ".join(path), command


def out_of_range(param: click.Parameter) -> str | None:
    """A value ``param`` must refuse, or None for one that takes any value of its type (a flag, a count)."""
    kind = param.type
    if isinstance(param, click.Option) and param.is_flag:
        return None
    if isinstance(kind, click.IntRange | click.FloatRange):
        if kind.min is not None:
            return str(kind.min - 1)
        return None if kind.max is None else str(kind.max + 1)
    if isinstance(kind, click.types.IntParamType | click.types.FloatParamType):
        return None
    return "x" * 5000  # text: longer than any id, name, topic, path or setting takes


CASES = [
    pytest.param(command, param, id=f"{path} {param.name}")
    for path, command in commands()
    for param in command.params
    if out_of_range(param) is not None
]


def test_every_command_is_walked() -> None:
    assert len(CASES) > 200


@pytest.mark.parametrize(("command", "param"), CASES)
def test_an_out_of_range_value_is_refused_when_the_options_are_parsed(command: click.Command, param) -> None:
    value = out_of_range(param)
    args = [value] if isinstance(param, click.Argument) else [param.opts[0], value]
    for other in command.params:  # the others given a plausible value, when required
        if other is not param and other.required:
            args += ["README.md"] if isinstance(other, click.Argument) else [other.opts[0], "a"]
    with pytest.raises(click.UsageError) as refused:
        command.make_context(command.name, args)
    assert "\n" not in refused.value.format_message()


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["gallery", "enroll", "--name", "x" * 300, "README.md"], id="gallery enroll --name"),
        # refused before it would connect: marked as the programs that stream to Kafka are
        pytest.param(
            ["produce", "--camera", "c" * 300, "--source", "a.jpg"], id="produce --camera", marks=pytest.mark.kafka
        ),
    ],
)
def test_a_command_says_one_line_and_exits_2(args: list[str]) -> None:
    said = subprocess.run([sys.executable, "-m", "facestream", *args], capture_output=True, text=True, timeout=60)
    assert said.returncode == 2 and said.stdout == ""
    assert len(said.stderr.strip().splitlines()) == 1 and "Traceback" not in said.stderr, said.stderr
    assert "at most 255 characters, got 300" in said.stderr
