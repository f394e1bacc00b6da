"""The docs generator and the benchmarks' judges: a run stopped at a time limit never reaches the README;
each target is judged on the runs it names."""

import json
from pathlib import Path

import pytest

from bench import e2e_report, engine, figures, save


def test_a_stopped_run_is_refused_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    results = tmp_path / "bench" / "results"
    save({"benchmark": "engine", "rows": [{"batch": 1}], "complete": False}, results / "engine-x.json")
    save({"benchmark": "kafka", "complete": True}, results / "kafka-x.json")
    monkeypatch.setattr(figures, "ROOT", tmp_path)
    with pytest.raises(SystemExit, match="engine-x.json"):
        figures.load()


def test_finished_and_older_runs_load_and_history_does_not(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    results = tmp_path / "bench" / "results"
    save({"benchmark": "kafka", "complete": True}, results / "kafka-x.json")
    (results / "older.json").write_text(json.dumps({"benchmark": "kafka"}))  # from before "complete" existed
    save({"benchmark": "kafka", "complete": True}, results / "history" / "replaced.json")  # not shown
    monkeypatch.setattr(figures, "ROOT", tmp_path)
    assert sorted(figures.load()) == ["kafka-x.json", "older.json"]


def _engine_run(batch1_vs_eager: float, **settings) -> dict:
    base = {
        "model": "mogface",
        "precision": "fp16",
        "provider": "cuda",
        "height": 480,
        "width": 640,
        "merge_heads": True,
        "cuda_options": [],
    }
    return {
        "benchmark": "engine",
        "settings": {**base, **settings},
        "rows": [{"batch": 1, "speedup_vs_torch_eager": batch1_vs_eager}],
    }


def test_batch1_target_takes_the_median_of_runs_of_the_same_engine() -> None:
    main = _engine_run(4.48)
    results = {
        "main": main,
        "repeat1": _engine_run(3.14),
        "repeat2": _engine_run(2.9),
        "separate": _engine_run(1.0, merge_heads=False),
        "option": _engine_run(1.0, cuda_options=[["fuse_conv_bias", "0"]]),
    }
    runs, ratios, median = engine.batch1_vs_eager(results, main)
    assert ratios == [2.9, 3.14, 4.48] and median == 3.14 and len(runs) == 3


def _e2e_run(
    p99s: list[float], detect_args: list[str], gpu: str = "NVIDIA H200", cameras: int = 300, **settings
) -> dict:
    rows = [
        {"cameras": cameras, "latency_ms_p99": p99, "not_delivered_10s_after_end": 0, "events_per_s": 29.0 * cameras}
        for p99 in p99s
    ]
    return {
        "benchmark": "e2e",
        "machine": {"gpu": f"{gpu}, 580.159.04, 81559 MiB"},
        "settings": {"model": "yunet", "replicas": 1, "frame_size": [640, 480], "extra_detect_args": detect_args}
        | settings,
        "rows": rows,
        "_file": f"e2e-{len(p99s)}-{'-'.join(detect_args)}.json",
    }


def test_300_cameras_are_judged_per_design_and_embedding_runs_apart() -> None:
    replicas = _e2e_run([146, 245, 154], ["--decode=gpu"], replicas=4)
    owner = _e2e_run([146, 148, 161], ["--decode=gpu"], fronts=4)
    embedding = _e2e_run([12639, 14128, 12433], ["--decode=gpu", "--embedder=sface"], fronts=4)
    runs = [replicas, owner, embedding]
    plain = [r for r in runs if not e2e_report.with_embedder(r["settings"])]
    held = e2e_report.repeated_300(plain, "yunet", 3)
    embedded = e2e_report.repeated_300(
        [r for r in runs if e2e_report.embedder(r["settings"]) == "sface"], "yunet + sface", 3
    )
    assert held and held.met and held.short == "3 of 3 runs, GPU owner + 4 fronts, H200"
    assert "4 replicas, H200: 2 of 3 runs" in held.measured
    assert embedded and not embedded.met and embedded.short == "0 of 3 runs, GPU owner + 4 fronts, H200"
    assert not e2e_report.repeated_300(plain, "yunet", 5).met  # 3 runs are not 5 of 5


def test_runs_on_other_gpus_or_decoders_are_other_designs() -> None:
    h200 = _e2e_run([146, 148, 161], ["--decode=gpu"], fronts=4)
    h100 = _e2e_run(
        [118, 121, 116, 114, 129], ["--decode=gpu", "--gpu-decoder=hw/native"], "NVIDIA H100 80GB HBM3", fronts=4
    )
    mixed = e2e_report.repeated_300([h200, h100], "yunet", 5)
    assert mixed and mixed.met and mixed.short == "5 of 5 runs, GPU owner + 4 fronts, decoder hw/native, H100"
    assert "GPU owner + 4 fronts, H200: 3 of 3 runs" in mixed.measured


def test_500_cameras_are_owed_in_proportion_to_the_engine_alone_on_each_gpu() -> None:
    def pipeline(gpu: str, engine: float) -> dict:
        settings = {"model": "yunet", "precision": "fp16", "provider": "cuda", "frame_size": [640, 480]}
        return {"benchmark": "pipeline", "machine": {"gpu": f"{gpu}, 580"}, "settings": settings} | {
            "engine_only_frames_per_s": engine
        }

    results = {"h200": pipeline("NVIDIA H200", 21500.0), "h100": pipeline("NVIDIA H100 80GB HBM3", 19350.0)}
    native = ["--decode=gpu", "--gpu-decoder=hw/native"]
    at_450 = _e2e_run([150, 220, 131], native, "NVIDIA H100 80GB HBM3", cameras=450, fronts=4)
    at_300 = _e2e_run([118, 121, 116], native, "NVIDIA H100 80GB HBM3", fronts=4)
    target = e2e_report.targets({"a": at_450, "b": at_300} | results)
    owed = next(t for t in target if "pro rata" in t.target)
    assert not owed.met and owed.short == "300 of 450 owed (H100, hw/native)"
    assert "450: 2 of 3 (p99 150, 220, 131 ms)" in owed.measured
    at_450["rows"][1]["latency_ms_p99"] = 180.0
    owed = next(t for t in e2e_report.targets({"a": at_450, "b": at_300} | results) if "pro rata" in t.target)
    assert owed.met and owed.short == "450 of 450 owed (H100, hw/native)"
    share = next(t for t in e2e_report.targets({"a": at_450} | results) if "engine alone" in t.target)
    assert share.short == f"{29.0 * 450 / 19350.0:.2f}"  # against the H100's engine, not the H200's


def test_two_gpus_are_judged_against_twice_the_count_one_gpu_held_every_time() -> None:
    one_gpu = [_e2e_run([110, 120, 115], ["--decode=gpu"], fronts=4), _e2e_run([140], ["--decode=gpu"], fronts=4)]
    assert e2e_report.held_every_time(one_gpu, 300)
    two = _e2e_run([182], ["--decode=gpu"], fronts=4, replicas=2, gpus=2)
    for row in two["rows"]:
        row["cameras"] = 600
    assert e2e_report.two_gpus([two], "yunet", 800) is None  # never measured: no row
    only = e2e_report.two_gpus([two], "yunet", 600)
    assert only and not only.met and only.short == "1 of 1 runs"  # one run is not 3 of 3
    assert "over 2 GPUs" in only.measured


def test_the_torch_engine_is_judged_on_its_fastest_build_and_its_own_e2e_runs() -> None:
    def engine_run(file: str, row: dict) -> dict:
        return {**_engine_run(1.0, torch_engine="quick"), "rows": [row], "_file": file}

    at32 = {"batch": 32, "project_ms_per_img": 2.84, "torch_compile_ms_per_img": 2.32}
    results = {
        "older": engine_run(
            "older.json", {**at32, "torch_engine_ms_per_img": 2.68, "torch_engine_speedup_vs_torch_compile": 0.86}
        ),
        "newer": engine_run(
            "newer.json",
            {**at32, "torch_engine_ms_per_img": 2.19, "torch_engine_speedup_vs_torch_compile": 1.06}
            | {"torch_engine_fraction_of_floor": 0.54},
        ),
        "b1": engine_run("b1.json", {"batch": 1, "project_ms_per_img": 4.66, "torch_engine_ms_per_img": 4.5}),
        "onnx": _engine_run(1.0),  # ONNX Runtime alone: no torch engine row
    }
    on_torch = _e2e_run([111, 111, 112], ["--decode=gpu"], provider="torch,cuda")
    for row in on_torch["rows"]:
        row["cameras"] = 12
    batch32, batch1 = engine.torch_engine_targets(results)
    e2e = e2e_report.torch_engine([on_torch])
    assert not batch32.met and batch32.source == "newer.json" and batch32.short == "2.19 ms, 1.06x"
    assert "54% of the physical floor" in batch32.measured
    assert batch1.met and batch1.short == "4.50 ms" and "ONNX Runtime 4.66" in batch1.measured
    assert e2e and e2e.met and e2e.short == "3 of 3 runs"
    assert e2e_report.on_torch(on_torch["settings"]) and not e2e_report.on_torch({"provider": "cuda"})
