"""facestream/extras.py against pyproject.toml, the list of record: each module it names comes with
the distribution of the extra it says, and each command it names exists."""

import re
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

from facestream import extras
from facestream.tools.cli import SUBCOMMANDS

PYPROJECT = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())["project"]


def distributions_of(extra: str) -> set[str]:
    """The distributions an extra installs, its nested ``facestream[...]`` extras followed."""
    found = set()
    for requirement in PYPROJECT["optional-dependencies"][extra]:
        name = re.split(r"[<>=\[ ;]", requirement)[0].lower()
        if name == "facestream":
            for nested in re.search(r"\[(.+)\]", requirement)[1].split(","):
                found |= distributions_of(nested)
        else:
            found.add(name.replace("_", "-"))
    return found


def test_each_module_comes_with_the_extra_named_for_it() -> None:
    installed = packages_distributions()
    for module, extra in extras.EXTRA_OF.items():
        names = {name.lower().replace("_", "-") for name in installed[module]}
        assert names & distributions_of(extra), f"{module} ({names}) is not in [{extra}]"


def test_each_command_s_extra_brings_every_module_its_service_uses() -> None:
    assert set(extras.EXTRA_OF_COMMAND) <= set(SUBCOMMANDS)
    for command, extra in extras.EXTRA_OF_COMMAND.items():
        assert extra in PYPROJECT["optional-dependencies"], command
    everything = distributions_of("all")
    assert {name for extra in set(extras.EXTRA_OF.values()) for name in distributions_of(extra)} <= everything
    base = {re.split(r"[<>=\[ ;]", r)[0].lower() for r in PYPROJECT["dependencies"]}
    assert not base & {"onnxruntime", "opencv-python-headless", "sqlalchemy", "onnx", "apprise"}
