"""``python -m bench``: every benchmark answers --help with examples (the benchmarks run from a checkout)."""

import pytest
from click.testing import CliRunner

from bench.cli import bench


@pytest.mark.parametrize("verb", sorted(bench.commands))
def test_help(verb: str) -> None:
    result = CliRunner().invoke(bench, [verb, "--help"])
    assert result.exit_code == 0, result.output
    assert "Example" in result.output
