"""The floors of docs/architecture.md, enforced: every import (top-level or inside a function) goes
down a floor or stays in its own package; services never import each other."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Folder in the repository -> the package it installs as (pyproject.toml's package-dir).
PACKAGES = {
    "schemas": "facestream.schemas",
    "facestream": "facestream",
    "producers": "facestream.producers",
    "detector_service": "facestream.detector_service",
    "alerting": "facestream.alerting",
    "alert_store": "facestream.alert_store",
    "notifier": "facestream.notifier",
    "dashboard": "facestream.dashboard",
    "tools": "facestream.tools",
    "bench": "bench",
}
# Lowest first. A package may import its own modules and any package on a lower floor.
FLOORS = [
    ["facestream.schemas"],  # the message contract
    ["facestream"],  # the base: errors, config, Kafka clients, assets, the local broker
    [
        "facestream.producers",
        "facestream.detector_service",
        "facestream.alerting",
        "facestream.alert_store",
        "facestream.notifier",
        "facestream.dashboard",
    ],  # services
    ["facestream.tools"],  # the commands that combine services
    ["bench"],  # benchmarks, run from a checkout
]


def package_of(module: str) -> str:
    """The longest package of FLOORS that ``module`` belongs to (``facestream.errors`` -> ``facestream``)."""
    candidates = [p for floor in FLOORS for p in floor if module == p or module.startswith(p + ".")]
    return max(candidates, key=len)


def floor_of(package: str) -> int:
    return next(i for i, floor in enumerate(FLOORS) if package in floor)


def modules() -> list[tuple[str, Path]]:
    found = []
    for folder, package in PACKAGES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            found.append((".".join((package, *parts)).removesuffix(".__init__"), path))
    return found


def imports(path: Path, module: str) -> list[str]:
    """Every module ``path`` imports that belongs to the project, with relative imports resolved."""
    names = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # the package the module is in (itself, for an __init__), then up level - 1
                package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
                anchor = package[: len(package) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            names.append(base)
    return [n for n in names if n.split(".")[0] in ("facestream", "bench")]


def violations() -> list[str]:
    found = []
    for module, path in modules():
        if path.name == "__main__.py":
            continue  # an entry point: run, never imported, so it sits above every floor
        own = package_of(module)
        for target in imports(path, module):
            other = package_of(target)
            if other != own and floor_of(other) >= floor_of(own):
                found.append(
                    f"{path.relative_to(ROOT)}: {module} (floor {floor_of(own)}) imports {target} "
                    f"(floor {floor_of(other)})"
                )
    return found


def test_every_import_goes_down() -> None:
    assert violations() == []


def test_the_check_sees_an_upward_import(tmp_path: Path) -> None:
    """The checker itself: a base module importing a service is caught."""
    path = tmp_path / "paths.py"
    path.write_text("def f():\n    from facestream.detector_service import models\n")
    target = imports(path, "facestream.paths")[0]
    assert floor_of(package_of(target)) > floor_of(package_of("facestream.paths"))


@pytest.mark.parametrize("folder", PACKAGES)
def test_every_folder_is_a_package_in_the_wheel(folder: str) -> None:
    """pyproject.toml lists packages one by one: a new sub-folder must be added there too."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    for init in (ROOT / folder).rglob("__init__.py"):
        parts = init.parent.relative_to(ROOT / folder).parts
        name = ".".join((PACKAGES[folder], *parts))
        assert folder == "bench" or name in listed, f"{name} is missing from pyproject.toml's packages"


@pytest.mark.parametrize(
    ("line", "name", "found"),
    [
        ("from . import state", "app.py", "facestream.dashboard"),
        ("from ..alerting import app", "app.py", "facestream.alerting"),
        ("from .. import kafka_clients", "app.py", "facestream"),
        ("from .reader import RecordReader", "__init__.py", "facestream.dashboard.reader"),
        ("from ..alerting import app", "__init__.py", "facestream.alerting"),
    ],
)
def test_relative_imports_resolve_to_what_python_imports(tmp_path: Path, line: str, name: str, found: str) -> None:
    # A two-level relative import from a module resolved outside the project, and passed unchecked.
    path = tmp_path / name
    path.write_text(line + "\n")
    module = "facestream.dashboard" if name == "__init__.py" else "facestream.dashboard.app"
    assert imports(path, module) == [found]


def subpackage_graph(package: str) -> dict[str, set[str]]:
    """Which subpackages of ``package`` (and its top-level modules, each its own node) import which."""

    def node(module: str) -> str:
        rest = module.removeprefix(package + ".").split(".")
        return rest[0]

    graph: dict[str, set[str]] = {}
    for module, path in modules():
        if module.startswith(package + "."):
            targets = {node(t) for t in imports(path, module) if t.startswith(package + ".")}
            graph.setdefault(node(module), set()).update(targets - {node(module)})
    return graph


def cycles(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Pairs of nodes that reach each other."""

    def reach(start: str) -> set[str]:
        seen, todo = set(), [start]
        while todo:
            for nxt in graph.get(todo.pop(), set()) - seen:
                seen.add(nxt)
                todo.append(nxt)
        return seen

    reached = {n: reach(n) for n in graph}
    return sorted((a, b) for a in graph for b in reached[a] if a < b and a in reached.get(b, set()))


@pytest.mark.parametrize("package", ["facestream.detector_service", "facestream.alerting"])
def test_a_services_subpackages_import_each_other_one_way(package: str) -> None:
    # detector_service: models/ (plugins, placement, box selection, graph rewrites) below decoding/ and
    # inference/ (engines); alerting: rules/ (and the settings a camera runs with) below config.
    assert cycles(subpackage_graph(package)) == []
