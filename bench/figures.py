"""What the docs' generator reads: the result files under bench/results/, the runs among them that
measured a given thing, and a target judged against its figure. Each benchmark's module renders its own
result (``render``) and judges its own targets (``targets``) with these; ``report.py`` puts them in the docs."""

import json
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def load() -> dict[str, dict]:
    """Every result file in bench/results/ by name, each with its name as ``_file``; history/ is not read."""
    results = {
        path.name: {**json.loads(path.read_text()), "_file": path.name}
        for path in sorted((ROOT / "bench" / "results").glob("*.json"))
    }
    stopped = [name for name, result in results.items() if result.get("complete") is False]
    if stopped:  # a run cut short at a time limit: its figures are for notes, not for the README
        raise SystemExit(f"bench/results holds runs that stopped before the end: {', '.join(stopped)}")
    return results


def runs_of(results: dict[str, dict], benchmark: str, **wanted) -> list[dict]:
    """Every run of ``benchmark`` whose recorded settings have each of ``wanted`` (a setting a run did
    not record, older than the option, matches only None). Runs are picked by what they measured,
    never by their file names."""
    return [
        r
        for r in results.values()
        if r["benchmark"] == benchmark and all(r["settings"].get(k) == v for k, v in wanted.items())
    ]


def newest(results: dict[str, dict], benchmark: str) -> dict | None:
    """The last run of ``benchmark`` in file order (names sort by what they measured, so among files of
    one set-up the latest), or None before the first."""
    runs = runs_of(results, benchmark)
    return runs[-1] if runs else None


@dataclass(frozen=True)
class Target:
    """One target against its figure: ``measured`` in full for docs/performance.md, ``short`` (or the
    full figure) for the README's summary."""

    target: str
    measured: str | None
    met: bool | None  # None: not measured yet
    source: str | None
    short: str | None = None

    @property
    def verdict(self) -> str:
        return "not measured yet" if self.met is None else ("met" if self.met else "**not met**")


def numbers(values: list[float]) -> str:
    """``8702, 8810, 8655``: the runs behind a median."""
    return ", ".join(f"{v:.0f}" for v in values)


def source(result: dict) -> str:
    """The sentence that ends a result's paragraph: the file its figures come from."""
    return f"Source: `bench/results/{result['_file']}`."
