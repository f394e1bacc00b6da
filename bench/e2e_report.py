"""How an end-to-end run (bench/e2e.py) reads in the docs: its table per file, the cameras that held
the latency goal, the e2e targets, MogFace's gated cameras and its end-to-end sentence. Apart from
e2e.py (which runs it) because judging 30 files over three designs takes as much code as running one."""

import statistics
from pathlib import Path

from bench import gate
from bench.figures import Target, runs_of, source
from bench.pipeline import yunet_gpu_pipelines


def render(result: dict) -> list[str]:
    m, s = result["machine"], result["settings"]
    streamed = f", every camera streaming {Path(s['source']).name}" if s.get("source") else ""
    produce = f" (produce {' '.join(s['extra_produce_args'])})" if s.get("extra_produce_args") else ""
    per = "front (its share of the owner's)" if _fronts(s) else "replica"
    lines = [
        f"**End to end, {_model_label(result)}{with_embedder(s)} on {s['provider']}, {_replicas(s)}{_decoder(s)}, "
        f"{_frames(s)}{streamed}{produce}, {_cores_of(m)}"
        f"{', ' + m['gpu'] if m.get('gpu') else ''}** (`{result['command']}`; cameras at {s['fps']:g} fps for "
        f"{s['duration_s']:g} s each; latency = a downstream reader's arrival time - capture time):",
        "",
        "| cameras | frames sent | events/s | p50 ms | p99 ms | p99 ms per 5 s of capture | lag at end | not delivered "
        f"| cores busy | decoding busy per {per} | cameras per replica |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in result["rows"]:
        windows = ", ".join(f"{v:.0f}" for v in r.get("latency_ms_p99_per_5s", [])) or "-"
        sent = r["frames_produced"]
        captured = r.get("frames_captured", sent)
        sent_text = f"{sent}" if sent == captured else f"{sent} of {captured} ({sent / captured:.1%})"
        decoding = ", ".join(f"{stage['busy']['decode']:.2f}" for stage in r.get("stages", [])) or "-"
        lines.append(
            f"| {r['cameras']} | {sent_text} | {r['events_per_s']:.0f} | {r['latency_ms_p50']:.0f} "
            f"| {r['latency_ms_p99']:.0f} | {windows} | {r['lag_at_end']} | {r['not_delivered_10s_after_end']} "
            f"| {_cores(r)} | {decoding} | {'/'.join(map(str, r.get('cameras_per_replica', []))) or '-'} |"
        )
    lines += ["", *_notes(result)]
    lines.append(f"Most cameras with p99 <= 200 ms and nothing lost: **{cameras_within(result)}**. {source(result)}")
    return lines


def _model_label(result: dict) -> str:
    """``mogface (mogface-random-640x480-fp16.onnx)`` for a file, the name alone for a named model."""
    model = result["settings"]["model"]
    name = result.get("model_name", model)
    return f"{name} ({model.rsplit('/', 1)[-1]})" if model.endswith(".onnx") else name


def _decoder(settings: dict) -> str:
    """``, decoder hw/native`` where the run chose nvImageCodec's set-up (``--gpu-decoder``)."""
    chosen = _detect_arg(settings, "--gpu-decoder")
    return f", decoder {chosen}" if chosen else ""


def _gpu(run: dict) -> str:
    """The GPU's model, short (``H100`` for ``NVIDIA H100 80GB HBM3, 580.159.04, 81559 MiB``)."""
    name = run["machine"].get("gpu", "").split(",")[0].removeprefix("NVIDIA ")
    return name.split()[0] if name else ""


def _cores(row: dict) -> str:
    """``detectors 1.2+1.1, broker 0.4, producers 0.9, reader 0.1``, or - for runs before it was measured."""
    busy = row.get("cores_busy")
    if not busy:
        return "-"
    detectors = "+".join(f"{v:.1f}" for k, v in busy.items() if k.startswith("detector"))
    rest = ", ".join(f"{k} {v:.1f}" for k, v in busy.items() if not k.startswith("detector"))
    return f"detectors {detectors}, {rest}"


def _cores_of(machine: dict) -> str:
    """``16 cores``, or ``16 of 32 cores`` where the run was held to part of the host (taskset)."""
    host = machine.get("cores_on_host")
    return f"{machine['cores']} of {host} cores" if host else f"{machine['cores']} cores"


def _frames(settings: dict) -> str:
    """What the cameras sent: one frame size, or (runs without ``frame_size``) the photos 640 px wide."""
    size = settings.get("frame_size")
    return f"{size[0]}x{size[1]} frames" if size else "photos 640 px wide"


def _detect_arg(settings: dict, option: str) -> str | None:
    """The value a run passed to detect for ``option`` (``--option=VALUE`` or ``--option VALUE``)."""
    args = list(settings.get("extra_detect_args", []))
    for i, arg in enumerate(args):
        if arg.startswith(f"{option}="):
            return arg.split("=", 1)[1]
        if arg == option and i + 1 < len(args):
            return args[i + 1]
    return None


def embedder(settings: dict) -> str | None:
    """The embedder a run's detectors ran (``--embedder=NAME`` among the arguments it passed to detect)."""
    return _detect_arg(settings, "--embedder")


def with_embedder(settings: dict) -> str:
    name = embedder(settings)
    return f" with {name} embeddings" if name and name != "none" else ""


def _fronts(settings: dict) -> int:
    return settings.get("fronts", 1) if settings.get("fronts", 1) > 1 else 0


def _replicas(settings: dict) -> str:
    """Replicas, each a whole detector; or with fronts, Kafka-facing processes around one GPU owner each;
    spread over GPUs one replica each when the run had several."""
    gpus = f" over {_gpus(settings)} GPUs" if _gpus(settings) > 1 else ""
    if _fronts(settings):
        return f"{settings['replicas']} replica(s) of one GPU owner and {settings['fronts']} fronts{gpus}"
    return f"{settings['replicas']} replica(s){gpus}"


def _notes(result: dict) -> list[str]:
    """How the run was set up where it differs from a plain one: pinned cores, a warm-up, a profiler."""
    s, notes = result["settings"], []
    cpus = result.get("cpus", {})
    if cpus.get("pinned"):
        notes.append(
            f"Producers pinned to cores {_span(cpus['producers'])}; broker, detectors and reader to cores "
            f"{_span(cpus['rest'])}."
        )
    if result.get("warm_up"):
        w = result["warm_up"]
        notes.append(
            f"Before the measured steps, {w['cameras']} cameras streamed for {s['warm_up_s']:g} s unmeasured (a "
            f"broker just started runs cold): p99 per 1 s of that warm-up "
            f"{', '.join(f'{v:.0f}' for v in w['latency_ms_p99_per_1s_first_10s'])} ms."
        )
    if s.get("profile_s"):
        notes.append(
            f"Every replica was sampled by py-spy for {s['profile_s']:g} s in each step (native stacks, which "
            "pause the process at each sample): its latencies are not the service's; the profile is in the file."
        )
    agreed = [r for r in result["rows"] if r.get("histogram_latency_ms_p99") is not None]
    if agreed:
        pairs = ", ".join(f"{r['cameras']} cameras {r['histogram_latency_ms_p99']:.0f}" for r in agreed)
        notes.append(
            f"p99 ms from the replicas' own histogram (`facestream_capture_to_event_seconds`, all replicas' "
            f"buckets added and read as Prometheus's histogram_quantile does; capture to the event handed to "
            f"Kafka): {pairs}."
        )
    if "stages" in (result["rows"] or [{}])[0]:
        decoder = "OpenCV" if s.get("provider") == "cpu" else "nvImageCodec"
        notes.append(
            f"Decoding busy: seconds a replica's decoding thread spent in {decoder} and the letterbox per second "
            "of the step (1.0: never idle); the file has every stage and each replica's first seconds."
        )
    return [" ".join(notes), ""] if notes else []


def _span(cores: list[int]) -> str:
    return f"{cores[0]}-{cores[-1]}" if cores == list(range(cores[0], cores[-1] + 1)) else ",".join(map(str, cores))


LATENCY_GOAL_MS = 200.0


def repeated_300(runs: list[dict], what: str, times: int) -> Target | None:
    """The goal of 300 cameras within 200 ms in ``times`` of ``times`` runs, from every file that repeated
    300 cameras (none is left out), per design (replicas or a GPU owner with fronts, decoder, GPU): met
    where one design held in every one of at least ``times`` runs; each design's count and p99s are listed."""
    repeated = [r for r in runs if sum(row["cameras"] == 300 for row in r["rows"]) >= 3]
    if not repeated:
        return None
    scores = []  # (runs held where every run held, share of runs held, design, runs held, runs, figures)
    for design, files in _by_design(repeated).items():
        rows = [row for r in files for row in r["rows"] if row["cameras"] == 300]
        held, p99s = held_and_p99s(rows)
        rate = statistics.median(row["events_per_s"] for row in rows)
        figures = f"p99 {p99s} ms; median {rate:.0f} events/s"
        scores.append((held if held == len(rows) else 0, held / len(rows), design, held, len(rows), figures))
    scores.sort(reverse=True)
    best = scores[0]
    return Target(
        f"e2e on one GPU, {what}: 300 cameras, p99 < 200 ms in {times} of {times} runs",
        "; ".join(f"{design}: {held} of {total} runs ({figures})" for *_, design, held, total, figures in scores),
        best[0] >= times,
        ", ".join(r["_file"] for r in repeated),
        f"{best[3]} of {best[4]} runs, {best[2]}",
    )


def _gpus(settings: dict) -> int:
    """How many GPUs an e2e run spread its replicas over (runs before ``--gpus`` had one)."""
    return settings.get("gpus", 1)


def on_torch(settings: dict) -> bool:
    """Whether an e2e run's detectors ran MogFace on the PyTorch engine (``--provider torch,...``)."""
    return settings.get("provider", "").startswith("torch")


def torch_engine(runs: list[dict]) -> Target | None:
    """The PyTorch engine's end-to-end goal: 12 cameras within 200 ms in 3 of 3 runs (its engine goals
    are judged in bench/engine.py)."""
    if not runs:
        return None
    cameras = max(cameras_within(r) for r in runs)
    repeated = [r for r in runs if sum(row["cameras"] == 12 for row in r["rows"]) >= 3]
    rows12 = [row for r in repeated for row in r["rows"] if row["cameras"] == 12]
    held, p99s = held_and_p99s(rows12)
    return Target(
        "e2e on one GPU, mogface, PyTorch engine: 12 cameras, p99 < 200 ms, 3 of 3 runs",
        f"{held} of {len(rows12)} runs at 12 (p99 {p99s} ms); at most {cameras} cameras held",
        len(rows12) >= 3 and held == len(rows12),
        ", ".join(sorted(r["_file"] for r in repeated)) or None,
        f"{held} of {len(rows12)} runs",
    )


def held_every_time(runs: list[dict], cameras: int) -> bool:
    """Whether, in the files that ran ``cameras`` three times or more, one design held every time
    (as the 300-camera goal is judged)."""
    repeated = [r for r in runs if sum(row["cameras"] == cameras for row in r["rows"]) >= 3]
    for files in _by_design(repeated).values():
        rows = [row for r in files for row in r["rows"] if row["cameras"] == cameras]
        if all(map(within, rows)):
            return True
    return False


def _by_design(runs: list[dict]) -> dict[str, list[dict]]:
    designs: dict[str, list[dict]] = {}
    for run in runs:
        designs.setdefault(_design(run), []).append(run)
    return designs


def two_gpus(runs: list[dict], what: str, cameras: int) -> Target | None:
    """A two-GPU goal (one GPU owner per GPU): ``cameras`` within 200 ms in 3 of 3 runs."""
    rows = [(r, row) for r in runs for row in r["rows"] if row["cameras"] == cameras]
    if not rows:
        return None
    held, p99s = held_and_p99s([row for _, row in rows])
    return Target(
        f"e2e on two GPUs, {what}: {cameras} cameras, p99 < 200 ms, 3 of 3 runs",
        f"{held} of {len(rows)} runs (p99 {p99s} ms; {_replicas(rows[0][0]['settings'])})",
        held >= 3 and held == len(rows),
        ", ".join(sorted({r["_file"] for r, _ in rows})),
        f"{held} of {len(rows)} runs",
    )


def _design(run: dict) -> str:
    """``GPU owner + 4 fronts, decoder hw/native, H100`` or ``4 replicas, H200``: how
    a run's detectors shared the GPU, how they decoded, and on which GPU (runs on different GPUs never
    make one design's count)."""
    settings = run["settings"]
    shared = f"GPU owner + {settings['fronts']} fronts" if _fronts(settings) else f"{settings['replicas']} replicas"
    return f"{shared}{_decoder(settings)}, {_gpu(run)}"


def per_track(runs: list[dict]) -> Target:
    """Issue 64's goal: YuNet + SFace with faces embedded per track (the rows say which share was
    embedded; every face embedded says 1.0), 400 cameras within 200 ms in 3 of 3 runs on an H200, or
    360 on an H100 (in proportion to the engine alone)."""
    what = "e2e, yunet + sface per track: 400 cameras (H100: 360), p99 < 200 ms, 3 of 3 runs"
    rows = [
        (run, row)
        for run in runs
        for row in run["rows"]
        if any((stage.get("faces_embedded_share") or 1.0) < 1.0 for stage in row.get("stages", []))
        and row["cameras"] >= (360 if "H100" in run["machine"].get("gpu", "") else 400)
    ]
    if not rows:
        return Target(what, None, None, None)
    held, p99s = held_and_p99s([row for _, row in rows])
    gpus = sorted({run["machine"]["gpu"].split(",")[0].replace("NVIDIA ", "") for run, _ in rows})
    measured = f"{held} of {len(rows)} runs ({', '.join(gpus)}; p99 {p99s} ms)"
    files = ", ".join(sorted({run["_file"] for run, _ in rows}))
    return Target(what, measured, held >= 3 and held == len(rows), files, f"{held} of {len(rows)} runs")


def held_and_p99s(rows: list[dict]) -> tuple[int, str]:
    """How many of an e2e run's rows held the latency goal, and their p99s in ms as one text."""
    return sum(map(within, rows)), ", ".join(f"{row['latency_ms_p99']:.0f}" for row in rows)


def within(row: dict) -> bool:
    return row["latency_ms_p99"] <= LATENCY_GOAL_MS and not row["not_delivered_10s_after_end"]


def cameras_within(result: dict) -> int:
    """The most cameras of a run with p99 <= 200 ms and nothing lost (whatever limit the run stopped at)."""
    return max((r["cameras"] for r in result["rows"] if within(r)), default=0)


def model_name(result: dict) -> str:
    return result.get("model_name", result["settings"]["model"])


def gated_mogface(results: dict[str, dict]) -> list[str]:
    """Cameras per GPU for MogFace-large with the motion gate, from the e2e runs on vtest.avi (every frame
    and gated, side by side) and the gate's measured share of frames sent on a quiet scene."""
    on_video = [r for r in runs_of(results, "e2e") if model_name(r) == "mogface" and r["settings"].get("source")]
    every = next((r for r in on_video if "--motion-gate" not in r["settings"]["extra_produce_args"]), None)
    gated = [r for r in on_video if "--motion-gate" in r["settings"]["extra_produce_args"]]
    gates = [r for r in results.values() if r["benchmark"] == "gate"]
    if not (every and gated and gates):
        return []
    at_limit = max((r for r in every["rows"] if within(r)), key=lambda r: r["cameras"])
    quiet = next(scene for scene in gates[-1]["scenes"] if "most faces" in scene["scene"])
    duty = next(r for r in quiet["rows"] if r["min_area"] == gate.DEFAULT_AREA)["sent_fraction"]
    runs = "; ".join(", ".join(_gated_row(row) for row in r["rows"]) + f" (`{r['_file']}`)" for r in gated)
    per_camera = duty * every["settings"]["fps"]
    return [
        f"**MogFace-large cameras per GPU with the motion gate.** Every frame of vtest.avi at 30 fps: "
        f"{at_limit['cameras']} cameras within p99 200 ms ({at_limit['events_per_s']:.0f} frames/s; "
        f"`{every['_file']}`). Gated (p99 per camera count): {runs}: on a busy street the gate sends nearly every "
        f"frame, so the count stays where it was. A quiet camera sends {100 * duty:.1f}% of its frames "
        f"(`{gates[-1]['_file']}`, the keyframes): at the {at_limit['events_per_s']:.0f} frames/s above, about "
        f"{round(at_limit['events_per_s'] / per_camera, -1):.0f} such cameras (derived from the two measurements, not "
        "streamed end to end: cameras started together send their first frames at once).",
        "",
    ]


def _gated_row(row: dict) -> str:
    sent = row["frames_produced"] / row["frames_captured"]
    return f"{row['cameras']} cameras {row['latency_ms_p99']:.0f} ms ({sent:.0%} sent)"


def mogface_e2e(results: dict[str, dict]) -> str:
    """The end-to-end sentence: cameras through a real broker, when a GPU run of ``bench e2e`` is there."""
    runs = [
        r
        for r in results.values()
        if r["benchmark"] == "e2e"
        and model_name(r) == "mogface"
        and r.get("mogface_heads") == "merged"  # the export's default
        and not r["settings"].get("extra_produce_args")  # every frame sent
        and r["machine"].get("gpu")
        and cameras_within(r)
    ]
    if not runs:
        return ""
    best = max(runs, key=cameras_within)
    row = next(r for r in best["rows"] if r["cameras"] == cameras_within(best))
    return (
        f" End to end through Kafka (producers, broker, {best['settings']['replicas']} detector replica(s) and "
        f"a reader on the same machine), {row['cameras']} cameras at 30 fps got their events with p50 "
        f"{row['latency_ms_p50']:.0f} ms and p99 {row['latency_ms_p99']:.0f} ms from capture "
        f"(`bench/results/{best['_file']}`)."
    )


def histogram_agrees(results: dict[str, dict]) -> list[Target]:
    """The detectors' latency histogram against the reader's per-event p99, in the same CPU run."""
    runs = [r for r in runs_of(results, "e2e") if r["settings"]["provider"] == "cpu"]
    rows = [row for r in runs for row in r["rows"] if row.get("histogram_latency_ms_p99") is not None]
    what = "Detector latency histogram p99 within 20% of bench e2e's per-event p99 (CPU, same run)"
    if not rows:
        return [Target(what, None, None, None)]
    gaps = [abs(row["histogram_latency_ms_p99"] / row["latency_ms_p99"] - 1) for row in rows]
    worst = max(range(len(rows)), key=gaps.__getitem__)
    source_file = next(r["_file"] for r in runs if rows[worst] in r["rows"])
    row = rows[worst]
    measured = (
        f"{max(gaps):.0%} apart at most ({len(rows)} steps; histogram {row['histogram_latency_ms_p99']:.0f} ms, "
        f"per event {row['latency_ms_p99']:.0f} ms)"
    )
    return [Target(what, measured, max(gaps) <= 0.2, source_file, f"{max(gaps):.0%} apart at most")]


def targets(results: dict[str, dict]) -> list[Target]:
    """The end-to-end targets: cameras per GPU within 200 ms (MogFace on either engine, YuNet with and
    without embeddings, 300 and 500 cameras), YuNet against its engine alone, and two GPUs."""
    gpu_runs = [r for r in runs_of(results, "e2e") if r["machine"].get("gpu")]
    unprofiled = [r for r in gpu_runs if not r["settings"].get("profile_s")]  # a profiler pauses the replicas
    measured = [r for r in unprofiled if _gpus(r["settings"]) == 1]
    on_two = [r for r in unprofiled if _gpus(r["settings"]) == 2]
    mogface = [r for r in measured if model_name(r) == "mogface" and not r["settings"].get("extra_produce_args")]
    found: list[Target | None] = []
    on_onnx = [r for r in mogface if not on_torch(r["settings"])]
    if on_onnx:
        best = max(on_onnx, key=cameras_within)
        found.append(
            Target(
                "e2e on one GPU, mogface: >= 10 cameras at 30 fps with p99 < 200 ms",
                f"{cameras_within(best)} cameras",
                cameras_within(best) >= 10,
                best["_file"],
            )
        )
    found.append(torch_engine([r for r in mogface if on_torch(r["settings"])]))
    detecting = [r for r in measured if model_name(r) == "yunet"]
    yunet = [r for r in detecting if not with_embedder(r["settings"])]
    found.append(repeated_300(yunet, "yunet", 5))
    found.append(repeated_300([r for r in detecting if embedder(r["settings"]) == "sface"], "yunet + sface", 3))
    found.append(per_track([r for r in detecting if embedder(r["settings"]) == "sface"]))
    found += [_h200s_500(yunet, results), _against_engine(yunet, results)]
    counts = {row["cameras"] for r in yunet for row in r["rows"]}
    one_gpu_count = max((cameras for cameras in counts if held_every_time(yunet, cameras)), default=0)
    found.append(two_gpus([r for r in on_two if model_name(r) == "mogface"], "mogface", 20))
    if one_gpu_count:
        yunet_two = [r for r in on_two if model_name(r) == "yunet" and not with_embedder(r["settings"])]
        found.append(two_gpus(yunet_two, f"yunet (2 x one GPU's {one_gpu_count})", 2 * one_gpu_count))
    return [t for t in found if t]


def _engine_alone(results: dict[str, dict]) -> dict[str, float]:
    """Per GPU model, the median frames/s of YuNet FP16's engine alone at 640x480 (``bench pipeline``)."""
    rates: dict[str, list[float]] = {}
    for r in yunet_gpu_pipelines(results):
        if r["settings"].get("frame_size") == [640, 480]:
            rates.setdefault(_gpu(r), []).append(r["engine_only_frames_per_s"])
    return {gpu: statistics.median(values) for gpu, values in rates.items()}


H200 = "H200"


def _h200s_500(yunet: list[dict], results: dict[str, dict]) -> Target | None:
    """500 cameras within 200 ms in 3 of 3 runs on an H200; on another GPU, the count in proportion to
    its engine alone against the H200's (the medians of ``bench pipeline``'s engine-only runs): per
    design, the most cameras that held in every run of at least three, against what its GPU owes."""
    engines = _engine_alone(results)
    h200 = next((rate for gpu, rate in engines.items() if gpu == H200), None)
    if h200 is None:
        return None
    scores = []  # (held count / count owed, short figure, text)
    for design, files in _by_design(yunet).items():
        gpu = _gpu(files[0])
        if gpu not in engines:
            continue
        owed = round(500 * engines[gpu] / h200)
        counts = sorted({row["cameras"] for r in files for row in r["rows"]}, reverse=True)
        held = next((n for n in counts if held_every_time(files, n)), 0)
        above = sorted({row["cameras"] for r in files for row in r["rows"] if row["cameras"] > held})
        beyond = ""
        for count in above:
            rows = [row for r in files for row in r["rows"] if row["cameras"] == count]
            times, p99s = held_and_p99s(rows)
            beyond += f"; {count}: {times} of {len(rows)} (p99 {p99s} ms)"
        every = f"3 of 3 or more at {held}" if held else "no count held in 3 of 3 runs"
        text = f"{design}: owes {owed} ({engines[gpu]:.0f} / {h200:.0f} frames/s alone); {every}{beyond}"
        chosen = _detect_arg(files[0]["settings"], "--gpu-decoder")
        short = f"{held} of {owed} owed ({gpu}{', ' + chosen if chosen else ''})"
        scores.append((held / owed, short, text))
    if not scores:
        return None
    scores.sort(reverse=True)
    return Target(
        "e2e on one GPU, yunet: 500 cameras (H200; pro rata elsewhere), p99 < 200 ms, 3 of 3 runs",
        "; ".join(text for *_, text in scores),
        scores[0][0] >= 1.0,
        ", ".join(sorted(r["_file"] for r in yunet)),
        scores[0][1],
    )


def _against_engine(yunet: list[dict], results: dict[str, dict]) -> Target | None:
    """Events/s at the most cameras that held, against the median of the engine alone at 640x480 on
    the same GPU model."""
    engines = _engine_alone(results)
    held = [
        (row["events_per_s"] / engines[_gpu(r)], r, row)
        for r in yunet
        for row in r["rows"]
        if within(row) and r["settings"].get("frame_size") and _gpu(r) in engines
    ]
    if not held:
        return None
    share, run, row = max(held, key=lambda found: found[0])
    return Target(
        "e2e yunet: events/s >= 0.75x the engine alone (same GPU) at the most cameras held",
        f"{share:.2f}: {row['events_per_s']:.0f} events/s at {row['cameras']} cameras "
        f"({_replicas(run['settings'])}{_decoder(run['settings'])}, {_gpu(run)}) / {engines[_gpu(run)]:.0f} "
        "(median engine alone on that GPU)",
        share >= 0.75,
        run["_file"],
        f"{share:.2f}",
    )
