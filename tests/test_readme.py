"""The README's figures are generated from the committed result files, never typed by hand."""

from bench import report


def test_performance_section_matches_the_result_files() -> None:
    readme = (report.ROOT / "README.md").read_text()
    section = readme[readme.index(report.BEGIN) + len(report.BEGIN) : readme.index(report.END)]
    assert section.strip() == report.render().strip(), "run: python bench/report.py"
