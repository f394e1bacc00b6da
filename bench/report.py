"""Regenerate the generated parts of the docs from the JSON files in bench/results/: every result in
docs/performance.md, the targets summary in the README, the speed paragraph in docs/mogface.md, the
stranger threshold in docs/alerting.md and the search figures in docs/search.md.

Each benchmark's module says how its own result reads (``render``) and judges its own targets
(``targets``); this module only puts them together. Figures in the docs are never typed by hand: run
``python -m bench.report`` after a benchmark, and commit the result file together with the docs it
changed (``--check`` fails if they are stale).
"""

import re
import sys
from collections.abc import Callable

from bench import (
    alert_store,
    alerting,
    capacity,
    clip,
    decode,
    detector_backlog,
    e2e_report,
    embedding,
    engine,
    fall,
    gate,
    install,
    kafka,
    line,
    live,
    pipeline,
    pose,
    profile,
    search,
    soak,
    threshold,
    tracks,
    transactions,
)
from bench.figures import ROOT, Target, load
from facestream.dashboard.access import roles_table

# benchmark (the ``benchmark`` of a result file) -> how one of its files reads in docs/performance.md
RENDERERS: dict[str, Callable[[dict], list[str]]] = {
    "alert_store": alert_store.render,
    "clip": clip.render,
    "capacity": capacity.render,
    "alerting": alerting.render,
    "decode": decode.render,
    "detector_backlog": detector_backlog.render,
    "e2e": e2e_report.render,
    "embedding": embedding.render,
    "engine": engine.render,
    "fall": fall.render,
    "gate": gate.render,
    "install": install.render,
    "kafka": kafka.render,
    "line": line.render,
    "live": live.render,
    "pipeline": pipeline.render,
    "pose": pose.render,
    "profile": profile.render,
    "search": search.render,
    "soak": soak.render,
    "threshold": threshold.render,
    "tracks": tracks.render,
    "transactions-under-faults": transactions.render,
}

# The targets table's rows, in this order: the GPU's figures first, then the services'.
TARGETS: list[Callable[[dict[str, dict]], list[Target]]] = [
    engine.targets,
    pipeline.targets,
    embedding.targets,
    e2e_report.targets,
    e2e_report.histogram_agrees,
    pose.targets,
    gate.targets,
    install.targets,
    alerting.targets,
    fall.targets,
    tracks.targets,
    alert_store.targets,
    live.targets,
    kafka.targets,
]


def target_rows(results: dict[str, dict]) -> list[Target]:
    """Every benchmark's targets against its measured figures."""
    return [row for judge in TARGETS for row in judge(results)]


def targets(results: dict[str, dict]) -> list[str]:
    """The targets table of docs/performance.md, each row with its source file."""
    return [
        "**Targets** (from the GPU issue; each row computed from the result file named):",
        "",
        "| target | measured | verdict | source |",
        "|---|---|---|---|",
        *(
            f"| {t.target} | {t.measured or '-'} | {t.verdict} | {f'`{t.source}`' if t.source else '-'} |"
            for t in target_rows(results)
        ),
    ]


def _gpu_name(gpu: str) -> str:
    """``NVIDIA H200`` out of ``2 x NVIDIA H200, 580.159.04, 143771 MiB`` (``NVIDIA H100`` out of ``NVIDIA
    H100 80GB HBM3, ...``)."""
    return " ".join(re.sub(r"^\d+ x ", "", gpu.split(",")[0]).split()[:2])


def render_summary(results: dict[str, dict]) -> str:
    """The README's short table: each target, its headline figure and whether it is met."""
    gpus = sorted({_gpu_name(r["machine"]["gpu"]) for r in results.values() if r["machine"].get("gpu")})
    plumbing = kafka.plumbing(results)
    machines = f"GPU rows on {', '.join(gpus) or 'no GPU yet'}, FP16, 640x480" + (
        f"; Kafka plumbing on {plumbing['machine']['cores']} CPU cores" if plumbing else ""
    )
    return "\n".join(
        [
            f"{machines}:",
            "",
            "| target | measured | verdict |",
            "|---|---|---|",
            *(f"| {t.target} | {t.short or t.measured or '-'} | {t.verdict} |" for t in target_rows(results)),
        ]
    )


def render(results: dict[str, dict]) -> str:
    """docs/performance.md: every result file, MogFace's gated cameras, the targets."""
    lines = []
    for result in results.values():
        lines += RENDERERS[result["benchmark"]](result) + [""]
        if result.get("command_note"):
            lines += [f"_Note on `{result['_file']}`: {result['command_note']}._", ""]
    lines += e2e_report.gated_mogface(results)
    lines += targets(results)
    return "\n".join(lines).strip()


def render_mogface_speed(results: dict[str, dict]) -> str:
    """One paragraph for the MogFace section: what a user can expect per GPU."""
    best_engine, pipe = engine.mogface_engine(results), pipeline.mogface_pipeline(results)
    if best_engine is None or pipe is None:
        return "Not measured yet: run `python -m bench engine` and `python -m bench pipeline` on a GPU."
    one = best_engine["rows"][0]
    best = next(r for r in best_engine["rows"] if r["batch"] == best_engine["best_batch"])
    cameras = int(pipe["pipeline_frames_per_s"] // 30)
    _, ratios, batch1 = engine.batch1_vs_eager(results, best_engine)
    s = best_engine["settings"]
    return (
        f"on {best_engine['machine'].get('gpu', '?').split(',')[0]} at {s['width']}x{s['height']} in FP16, the "
        f"engine runs MogFace-large at {one['project_ms_per_img']:.1f} ms "
        f"for a single frame and {best['project_img_per_s']:.0f} frames/s at batch {best['batch']} (engine alone); "
        f"the detector pipeline, JPEG bytes to serialised events, makes {pipe['pipeline_frames_per_s']:.0f} frames/s "
        f"at batch {pipe['settings']['batch']}: about {cameras} cameras at 30 fps per GPU. That is "
        f"{best_engine['speedup_vs_torch_eager']:.2f}x PyTorch FP16 eager and "
        f"{best_engine['speedup_vs_torch_compile']:.2f}x `torch.compile` at batch {best_engine['best_batch']}; at "
        f"batch 1, {one['speedup_vs_torch_eager']:.2f}x eager in that run and {batch1:.2f}x in the median of "
        f"{len(ratios)} runs." + e2e_report.mogface_e2e(results)
    )


# (file, marker name) -> what goes between ``<!-- NAME:begin -->`` and ``<!-- NAME:end -->`` in it.
BLOCKS: dict[tuple[str, str], Callable[[dict[str, dict]], str]] = {
    ("docs/performance.md", "bench"): render,
    ("README.md", "summary"): render_summary,
    ("docs/mogface.md", "mogface-speed"): render_mogface_speed,
    ("docs/alerting.md", "threshold"): threshold.block,
    ("docs/search.md", "search"): search.block,
    ("docs/dashboard.md", "roles"): lambda _results: roles_table(),
    ("docs/dashboard.md", "clip"): clip.block,
    ("docs/capacity.md", "capacity"): capacity.block,
}


def markers(name: str) -> tuple[str, str]:
    return f"<!-- {name}:begin -->", f"<!-- {name}:end -->"


def generated(text: str, name: str) -> str:
    """What stands between ``name``'s markers in ``text``."""
    begin, end = markers(name)
    return text[text.index(begin) + len(begin) : text.index(end)]


def main() -> None:
    results, stale = load(), []
    for (file, name), make in BLOCKS.items():
        path = ROOT / file
        text = path.read_text()
        begin, end = markers(name)
        updated = text[: text.index(begin) + len(begin)] + "\n" + make(results) + "\n" + text[text.index(end) :]
        if updated != text:
            stale.append(file)
            if "--check" not in sys.argv:
                path.write_text(updated)
    if "--check" in sys.argv and stale:
        sys.exit(f"generated parts of {', '.join(stale)} are stale: run python -m bench.report")


if __name__ == "__main__":
    main()
