"""The README's figures are generated from the committed result files, never typed by hand."""

from bench import report


def test_generated_sections_match_the_result_files() -> None:
    readme = (report.ROOT / "README.md").read_text()
    for (begin, end), make in report.BLOCKS.items():
        section = readme[readme.index(begin) + len(begin) : readme.index(end)]
        assert section.strip() == make().strip(), "run: python bench/report.py"
