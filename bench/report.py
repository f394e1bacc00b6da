"""Regenerate the README's performance section from the JSON files in bench/results/.

Figures in the README are never typed by hand: run ``python bench/report.py`` after a benchmark,
and commit the result file together with the README it changed.
"""

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"


def detector_backlog(result: dict) -> list[str]:
    m = result["machine"]
    runs = ", ".join(str(r["frames_per_s"]) for r in result["runs"])
    split = result["runs"][0]["ms_per_frame"]
    s = result["settings"]
    return [
        f"**CPU path, one detector, real broker** (`{result['command']}`): "
        f"median **{result['median_frames_per_s']} frames/s** (runs: {runs}) with YuNet at 640x480 input, "
        f"batch {s['batch']}, frames {s['width']} px wide, on {m['cores']} cores of an {m['cpu']} "
        f"(onnxruntime {m['versions'].get('onnxruntime', '?')}, provider {result['runs'][0]['provider']}). "
        f"Per frame: decode + letterbox {split['preprocess']} ms, inference {split['infer']} ms, "
        f"decode + NMS + event {split['postprocess']} ms (first run). Source: `bench/results/cpu_detector_backlog.json`.",
    ]


RENDERERS = {"detector_backlog": detector_backlog}


def render() -> str:
    lines = []
    for path in sorted((ROOT / "bench" / "results").glob("*.json")):
        result = json.loads(path.read_text())
        lines += RENDERERS[result["benchmark"]](result) + [""]
    return "\n".join(lines).strip()


def main() -> None:
    readme = ROOT / "README.md"
    text = readme.read_text()
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    updated = text[:start] + "\n" + render() + "\n" + text[end:]
    if "--check" in sys.argv:
        sys.exit(0 if updated == text else "README's performance section is stale: run python bench/report.py")
    readme.write_text(updated)


if __name__ == "__main__":
    main()
