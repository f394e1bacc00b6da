"""``python -m bench``: every benchmark answers --help with examples (the benchmarks run from a checkout),
and its declared settings make its options."""

import pytest
from click.testing import CliRunner

from bench.cli import bench
from bench.settings import E2EConfig, EngineBenchConfig, PipelineBenchConfig, ProfileBenchConfig
from facestream.config import command_line


@pytest.mark.parametrize("verb", sorted(bench.commands))
def test_help(verb: str) -> None:
    result = CliRunner().invoke(bench, [verb, "--help"])
    assert result.exit_code == 0, result.output
    assert "Example" in result.output


def test_settings_go_through_the_command_line_and_back() -> None:
    # A renamed option (--batch), a flag pair (--separate-heads), a repeatable option, a parsed list.
    cfg = EngineBenchConfig(
        batches=(1, 32), baselines=(), cuda_options=(("prefer_nhwc", "0"), ("a", "b")), merge_heads=False
    )
    args = command_line(cfg)
    assert args[:2] == ["--batch", "1,32"] and "--separate-heads" in args and args.count("--cuda-option") == 2
    context = bench.commands["engine"].make_context("engine", args)
    assert EngineBenchConfig(**context.params) == cfg


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["engine", "--baselines", "fast"], "unknown baselines fast"),
        (["engine", "--cuda-option", "prefer_nhwc"], "expected KEY=VALUE"),
        (["e2e", "--producer-cpus", "a-b"], "expected cores like 12-15"),
        (["pipeline", "--fronts", "2", "--workers", "2"], "two designs"),
        (["decode", "--frames", "64", "--batch", "256"], "must hold at least one --batch"),
    ],
)
def test_a_bad_value_is_refused_naming_what_is_wrong(args: list[str], said: str) -> None:
    result = CliRunner().invoke(bench, args)
    assert result.exit_code != 0 and said in result.output + str(result.exception)


def test_default_result_files_are_named_after_the_settings() -> None:
    engine = EngineBenchConfig(merge_heads=False, cuda_options=(("a", "b"),))
    assert engine.result_file.name == "engine-mogface-fp16-cuda-separate-heads-a-b.json"
    pipeline = PipelineBenchConfig(model="/m/yunet.onnx", workers=4, frame_size=(640, 480))
    assert pipeline.result_file.name == "pipeline-yunet-fp16-cuda-4-workers-640x480.json"
    assert ProfileBenchConfig(batch=1).as_engine().result_file.name == "profile-mogface-fp16-cuda-b1.json"
    assert E2EConfig(allow_random_weights=True, extra_detect_args=("--decode=gpu",)).detect_args == (
        "--decode=gpu",
        "--allow-random-weights",
    )
