"""bench decode: a run where only the CPU decoder can go (GPU set-ups say why)."""

import json
from pathlib import Path

import pytest

from bench.decode import DecodeBenchConfig, render, run
from facestream.detector_service.decoding import preprocess_gpu


def test_a_bad_variant_fails_before_timing(tmp_path: Path) -> None:
    cfg = DecodeBenchConfig(
        frames=32,
        batch=16,
        height=480,
        width=640,
        frame_size=None,
        variants=("all", "hw/quick"),
        cpu_threads=2,
        repeats=1,
        load=False,
        out=tmp_path / "decode.json",
    )
    with pytest.raises(ValueError, match="quick"):
        run(cfg, "python -m bench decode")
    assert not cfg.out.exists()


@pytest.mark.skipif(preprocess_gpu.available() is None, reason="a GPU machine runs the GPU variants")
def test_without_a_gpu_the_cpu_decoder_runs_and_gpu_variants_say_why(sample_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "decode.json"
    cfg = DecodeBenchConfig(
        frames=32,
        batch=16,
        height=480,
        width=640,
        frame_size=(640, 480),
        variants=("all", "hw/keep"),
        cpu_threads=2,
        repeats=1,
        load=True,
        out=out,
    )
    run(cfg, "python -m bench decode")
    result = json.loads(out.read_text())
    cpu, *gpu = result["rows"]
    assert cpu["variant"] == "cpu" and cpu["images_per_s"] > 0 and "images_per_s_under_load" not in cpu
    assert [r["variant"] for r in gpu] == ["all", "hw/keep"]
    assert all(r["error"].startswith("not run:") for r in gpu)
    table = "\n".join(render({**result, "_file": out.name}))
    assert "| cpu |" in table and "not run:" in table
