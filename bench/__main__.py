"""``python -m bench VERB``, from the repository root: the benchmarks are not part of the wheel."""

from bench.cli import bench
from facestream.command import run

run(bench, env_prefix="FACESTREAM_BENCH")
