"""The docs: generated figures match the committed result files, the README stays short, every
relative link resolves, and nothing points outside the repository (it must stand alone)."""

import re
import subprocess

import pytest

from bench import report
from bench.figures import load

ROOT = report.ROOT
DOCS = ["README.md", *(p.relative_to(ROOT).as_posix() for p in sorted((ROOT / "docs").glob("*.md")))]


@pytest.mark.parametrize(("file", "name"), list(report.BLOCKS))
def test_generated_parts_match_the_result_files(file: str, name: str) -> None:
    section = report.generated((ROOT / file).read_text(), name)
    assert section.strip() == report.BLOCKS[(file, name)](load()).strip(), "run: python -m bench.report"


def test_readme_stays_short() -> None:
    assert len((ROOT / "README.md").read_bytes()) <= 15_000


@pytest.mark.parametrize("doc", [*DOCS, "bench/README.md", "schemas/README.md"])
def test_relative_links_resolve(doc: str) -> None:
    path = ROOT / doc
    for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", path.read_text()):
        assert (path.parent / target).exists(), f"{doc} links to {target}, which does not exist"


def test_nothing_points_outside_the_repository() -> None:
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    outside = re.compile(r"\.\./shared|\bshared/(device|mogface|models)|SPEC\.md")
    found = [
        name
        for name in tracked.split()
        if not name.startswith("bench/results/") and (ROOT / name).is_file() and name != "tests/test_docs.py"
        for line in (ROOT / name).read_text(errors="replace").splitlines()
        if outside.search(line)
    ]
    assert found == []


def test_every_rule_of_the_registry_has_its_paragraph_and_settings_table_in_the_docs() -> None:
    from facestream.alerting.rules.registry import REGISTRY
    from facestream.config import settings_table

    text = (ROOT / "docs" / "alerting.md").read_text()
    for rule in REGISTRY:
        assert f"\n## The {rule.name} rule\n" in text, f"docs/alerting.md has no section '## The {rule.name} rule'"
        table = settings_table(rule.settings)
        assert table in text, f"paste facestream.config.settings_table({rule.settings.__name__}) into docs/alerting.md"


def test_the_table_of_alert_kinds_in_the_docs_is_the_contract_s() -> None:
    from facestream.schemas.kinds import markdown_table

    table = markdown_table()
    assert table in (ROOT / "docs" / "alerting.md").read_text(), "paste facestream.schemas.kinds.markdown_table()"


def test_the_dashboard_settings_in_the_docs_are_the_codes() -> None:
    from facestream.config import settings_table
    from facestream.dashboard.config import DashboardConfig

    assert settings_table(DashboardConfig) in (ROOT / "docs" / "dashboard.md").read_text()


def test_the_producer_settings_in_the_docs_are_the_codes() -> None:
    from facestream.config import settings_table
    from facestream.producers.config import ProducerConfig

    assert settings_table(ProducerConfig) in (ROOT / "docs" / "configuration.md").read_text()


def test_the_alert_store_settings_in_the_docs_are_the_codes() -> None:
    from facestream.alert_store.config import AlertStoreConfig
    from facestream.config import settings_table

    assert settings_table(AlertStoreConfig) in (ROOT / "docs" / "alerting.md").read_text()


def test_the_notifier_settings_in_the_docs_are_the_codes() -> None:
    from facestream.config import settings_table
    from facestream.notifier.config import NotifierConfig
    from facestream.notifier.rules import TargetSettings

    text = (ROOT / "docs" / "alerting.md").read_text()
    assert settings_table(TargetSettings) in text and settings_table(NotifierConfig) in text


def test_the_messages_troubleshooting_quotes_are_ones_the_code_prints() -> None:
    """A symptom quoted in docs/troubleshooting.md (``...`` for what varies) is text of the source."""
    packages = ["alert_store", "alerting", "dashboard", "detector_service", "facestream", "notifier", "producers"]
    source = "\n".join(p.read_text() for name in [*packages, "tools"] for p in (ROOT / name).rglob("*.py"))
    rows = [line.split(" | ")[0] for line in (ROOT / "docs/troubleshooting.md").read_text().splitlines()]
    quoted = [span for row in rows if row.startswith("| ") for span in re.findall(r"`([^`]+)`", row)]
    assert len(quoted) > 40
    missing = [span for span in quoted if any(part.strip() not in source for part in span.split("..."))]
    assert not missing, f"quoted in docs/troubleshooting.md but printed nowhere: {missing}"


def test_no_help_text_quotes_a_measured_figure_of_some_hardware() -> None:
    # Figures measured on a machine belong in the generated docs, beside their result file; help texts
    # would keep them long after a new measurement changed them.
    import click

    from facestream.tools.cli import cli

    def texts(command: click.Command, path: str):
        yield path, command.help or ""
        for param in command.params:
            yield f"{path} {param.name}", getattr(param, "help", None) or ""
        if isinstance(command, click.Group):
            context = click.Context(command)
            for name in command.list_commands(context):
                sub = command.get_command(context, name)
                if sub is not None:
                    yield from texts(sub, f"{path} {name}")

    hardware = re.compile(r"\b(H100|H200|A100|L4|T4|RTX|GeForce)\b")
    assert [where for where, text in texts(cli, "facestream") if hardware.search(text)] == []


def test_every_result_in_history_has_its_line_and_every_cited_result_exists() -> None:
    history = ROOT / "bench" / "results" / "history"
    listed = set(re.findall(r"^\| `([^`]+\.json)` \|", (history / "README.md").read_text(), re.M))
    assert listed == {p.name for p in history.glob("*.json")}, "bench/results/history/README.md: one line per file"
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    cited = {
        (name, path)
        for name in tracked.split()
        if not name.startswith("bench/results/") and (ROOT / name).is_file()
        for path in re.findall(r"bench/results/[a-z0-9_./-]+\.json", (ROOT / name).read_text(errors="replace"))
    }
    assert [(name, path) for name, path in cited if not (ROOT / path).exists()] == []
