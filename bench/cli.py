"""``python -m bench``: the benchmarks, each writing bench/results/*.json and printing a table."""

import shlex
import sys
from dataclasses import replace
from typing import Any

import click

from bench.settings import (
    AlertingBenchConfig,
    AlertStoreBenchConfig,
    BacklogBenchConfig,
    CapacityBenchConfig,
    ClipBenchConfig,
    DecodeBenchConfig,
    E2EConfig,
    EmbeddingBenchConfig,
    EngineBenchConfig,
    FallBenchConfig,
    GateBenchConfig,
    InstallBenchConfig,
    KafkaBenchConfig,
    LineBenchConfig,
    LiveBenchConfig,
    PipelineBenchConfig,
    PoseBenchConfig,
    ProfileBenchConfig,
    SearchBenchConfig,
    SoakConfig,
    ThresholdBenchConfig,
    TracksBenchConfig,
)
from facestream.config import options


def _command(verb: str) -> str:
    """The command line as typed, for the result file (``python -m bench VERB ...``)."""
    return "python -m bench " + " ".join(shlex.quote(a) for a in sys.argv[sys.argv.index(verb) :])


def _resolved(cfg: Any) -> Any:
    """``cfg`` with its result file named: the default one its settings make, unless --out gave one."""
    return replace(cfg, out=cfg.result_file)


@click.group()
def bench() -> None:
    """Benchmarks: engine speed against PyTorch, and more."""


@bench.command(
    epilog="""\b
Examples (on the GPU machine):
  python -m bench engine --model mogface --batch 1,8,16,32 --precision fp16 --provider cuda
  python -m bench engine --model yunet --batch 1,32,128 --provider cuda --baselines none
  python -m bench engine --model mogface --provider cpu --height 96 --width 128 --batch 1,2   # a dry run
  python -m bench engine --model mogface --batch 32 --baselines none --cuda-option cudnn_conv_algo_search=HEURISTIC
  python -m bench engine --model mogface --batch 1,32 --separate-heads   # the official layout of the heads
""",
    context_settings={"show_default": True},
)
@options(EngineBenchConfig)
def engine(**values) -> None:
    """Engine ms/image and images/s per batch, with PyTorch eager and torch.compile in the same run."""
    from bench.engine import run

    run(_resolved(EngineBenchConfig(**values)), _command("engine"))


@bench.command(
    epilog="""\b
Examples (on the GPU machine):
  python -m bench profile --model mogface --batch 16 --provider cuda
  python -m bench profile --model mogface --batch 1 --separate-heads
""",
    context_settings={"show_default": True},
)
@options(ProfileBenchConfig)
def profile(**values) -> None:
    """Per-operator time of the exported and the rewritten graph (where the milliseconds go)."""
    from bench.profile import run

    cfg = ProfileBenchConfig(**values)
    run(cfg.as_engine(), cfg.batch, _command("profile"))


@bench.command(
    epilog="""\b
Examples (on the GPU machine):
  python -m bench pipeline --model yunet --batch 256 --frames 8192 --provider cuda --precision fp16
  python -m bench pipeline --model yunet --batch 256 --frames 16384 --provider cuda --precision fp16 --workers 4
  python -m bench pipeline --model yunet --batch 256 --frames 16384 --provider cuda --precision fp16 --fronts 4
  python -m bench pipeline --model yunet --batch 256 --frames 8192 --provider cuda --gpu-decoder all
  python -m bench pipeline --model mogface --batch 16 --frames 512 --provider cuda
""",
    context_settings={"show_default": True},
)
@options(PipelineBenchConfig)
def pipeline(**values) -> None:
    """JPEG bytes in memory -> serialised events, against the engine alone at the same batch."""
    from bench.pipeline import run

    run(_resolved(PipelineBenchConfig(**values)), _command("pipeline"))


@bench.command(
    epilog="""\b
Examples:
  python -m bench decode --variants all,hw,gpu,all/keep,hw/keep,all/t4     # on the GPU machine
  python -m bench decode --frames 256 --no-load                           # the CPU pool alone, anywhere
""",
    context_settings={"show_default": True},
)
@options(DecodeBenchConfig)
def decode(**values) -> None:
    """JPEG decoding alone: the CPU pool and nvImageCodec set-ups side by side, GPU idle and busy."""
    from bench.decode import run

    run(DecodeBenchConfig(**values), _command("decode"))


@bench.command(
    epilog="""\b
Examples (on the GPU machine):
  python -m bench embedding --model yunet --batch 256 --faces 1,2,4,6
  python -m bench embedding --provider cpu --precision fp32 --batch 8 --fps 5 --faces 1,4 --repeats 1  # dry run
""",
    context_settings={"show_default": True},
)
@options(EmbeddingBenchConfig)
def embedding(**values) -> None:
    """Embeddings' cost: the embedder alone per batch of faces, and the detector pipeline's frames/s
    with and without them at 1 to 6 faces per frame, side by side."""
    from bench.embedding import run

    run(_resolved(EmbeddingBenchConfig(**values)), _command("embedding"))


@bench.command(
    epilog="""\b
Examples:
  python -m bench gate                                      # vtest.avi and a quiet scene, YuNet on the CPU
  python -m bench gate --min-area 0.001,0.01 --keyframe-s 2
""",
    context_settings={"show_default": True},
)
@options(GateBenchConfig)
def gate(**values) -> None:
    """The motion gate: share of frames sent and recall of faces against sending every frame."""
    from bench.gate import run

    run(GateBenchConfig(**values), _command("gate"))


@bench.command(
    epilog="""\b
Examples:
  python -m bench install                    # pip install facestream beside facestream[all], and their images
  python -m bench install --no-images
""",
    context_settings={"show_default": True},
)
@options(InstallBenchConfig)
def install(**values) -> None:
    """The edge producer's install beside every service's: environment, packages and image sizes."""
    from bench.install import run

    run(InstallBenchConfig(**values), _command("install"))


@bench.command(
    epilog="""\b
Examples:
  python -m bench live                                     # both parts, 720p and 1080p
  python -m bench live --cameras '' --repeats 5            # decoding cost only
  python -m bench live --sizes '' --cameras 16,20,24 --camera-repeats 3 --out bench/results/live-cameras-cpu.json
""",
    context_settings={"show_default": True},
)
@options(LiveBenchConfig)
def live(**values) -> None:
    """Live RTSP cameras: decoding CPU per camera by library and mode; cameras one producer core holds."""
    from bench.live import run

    run(LiveBenchConfig(**values), _command("live"))


@bench.command(
    epilog="""\b
Examples:
  python -m bench alert-store                              # a million alerts, SQLite and PostgreSQL
  python -m bench alert-store --alerts 100000 --engines sqlite
""",
    context_settings={"show_default": True},
)
@options(AlertStoreBenchConfig)
def alert_store(**values) -> None:
    """The history's speed: a page of alerts out of a million, under filters, on SQLite and PostgreSQL."""
    from bench.alert_store import run

    run(AlertStoreBenchConfig(**values), _command("alert-store"))


@bench.command(
    epilog="""\b
Examples:
  python -m bench capacity                                 # the broker running: frame sizes, a check run
""",
    context_settings={"show_default": True},
)
@options(CapacityBenchConfig)
def capacity(**values) -> None:
    """What one camera costs Kafka (frame and event bytes at three sizes), checked by a small run on the
    local broker; docs/capacity.md's plan is worked out from it."""
    from bench.capacity import run

    run(CapacityBenchConfig(**values), _command("capacity"))


@bench.command(
    epilog="""\b
Examples:
  python -m bench clip                                     # a 20 s alert at 10 and 30 fps (broker running)
  python -m bench clip --seconds 60 --fps 30
""",
    context_settings={"show_default": True},
)
@options(ClipBenchConfig)
def clip(**values) -> None:
    """An alert's clip, as the review page asks for it: its frames read back from Kafka, faces boxed,
    H.264 by PyAV; the target is a 20 s alert within 2 s."""
    from bench.clip import run

    run(ClipBenchConfig(**values), _command("clip"))


@bench.command(
    epilog="""\b
Examples:
  python -m bench search                                   # a million sightings, usearch and faiss
  python -m bench search --sightings 100000 --libraries usearch
""",
    context_settings={"show_default": True},
)
@options(SearchBenchConfig)
def search(**values) -> None:
    """Search by face, the index alone: usearch and faiss (HNSW) against exact search, for query time,
    recall above the threshold, indexing rate and memory."""
    from bench.search import run

    run(SearchBenchConfig(**values), _command("search"))


@bench.command(
    epilog="""\b
Examples:
  python -m bench threshold                   # YuNet + SFace on this machine's CPU
""",
    context_settings={"show_default": True},
)
@options(ThresholdBenchConfig)
def threshold(**values) -> None:
    """The stranger threshold: SFace similarities of one person and of two people, false match and
    false stranger rates per threshold, on the sample photos and their variants."""
    from bench.threshold import run

    run(ThresholdBenchConfig(**values), _command("threshold"))


@bench.command(
    epilog="""\b
Examples:
  python -m bench tracks                      # 5, 10 and 30 fps, YuNet + SFace on this machine's CPU
  python -m bench tracks --fps 10 --out /tmp/tracks.json
""",
    context_settings={"show_default": True},
)
@options(TracksBenchConfig)
def tracks(**values) -> None:
    """Face tracks against ground truth: six people's faces moved over a real street on three cameras,
    through the detector and the alerting service's tracker; IDF1, ID switches and MOTA (motmetrics)."""
    from bench.tracks import run

    run(TracksBenchConfig(**values), _command("tracks"))


@bench.command(
    epilog="""\b
Examples:
  python -m bench pose --provider cpu --batch 1,8 --frames 200
  python -m bench pose --provider cuda --batch 1,16,64 --frames 795   # on the GPU machine
  python -m bench pose --provider cuda --batch 32,64,256 --precision fp16
""",
    context_settings={"show_default": True},
)
@options(PoseBenchConfig)
def pose(**values) -> None:
    """Body-pose frames/s (MoveNet through the service's processor) on OpenCV's pedestrian video."""
    from bench.pose import run

    run(PoseBenchConfig(**values), _command("pose"))


@bench.command(
    epilog="""\b
Examples:
  python -m bench line
  python -m bench line --input-sizes 512x384 --every 1,2,4,10 --min-score 0.3
""",
    context_settings={"show_default": True},
)
@options(LineBenchConfig)
def line(**values) -> None:
    """The line rule's crossings on OpenCV's pedestrian video against crossings counted by eye."""
    from bench.line import run

    run(LineBenchConfig(**values), _command("line"))


@bench.command(
    epilog="""\b
Examples:
  python -m bench fall --falls 5
""",
    context_settings={"show_default": True},
)
@options(FallBenchConfig)
def fall(**values) -> None:
    """Time from the first frame of a fall to its alert on the broker, live (pose service + alerting)."""
    from bench.fall import run

    run(FallBenchConfig(**values), _command("fall"))


@bench.command(
    epilog="""\b
Examples (this machine, local broker running):
  python -m bench soak                                  # an hour: make soak
  python -m bench soak --minutes 3 --warm-up-s 60 --out /tmp/soak.json   # a quick look
""",
    context_settings={"show_default": True},
)
@options(SoakConfig)
def soak(**values) -> None:
    """The CPU pipeline at a steady load for an hour: memory, descriptors and lag must stay flat."""
    from bench.soak import run

    found = run(SoakConfig(**values), _command("soak"))
    if not found["verdict"]["holds"]:
        raise click.exceptions.Exit(1)


@bench.command(
    epilog="""\b
Examples (this machine, local broker running):
  python -m bench alerting --events 60000 --cameras 100 --workers 1,2
  python -m bench alerting --events 20000 --faces 4 --runs 1
""",
    context_settings={"show_default": True},
)
@options(AlertingBenchConfig)
def alerting(**values) -> None:
    """Events per second alerting workers drain from a backlog, with real embeddings and a gallery."""
    from bench.alerting import run

    run(AlertingBenchConfig(**values), _command("alerting"))


@bench.command(
    epilog="\b\nExample (this machine, local broker running):\n  python -m bench kafka --frames 5000 --runs 3",
    context_settings={"show_default": True},
)
@options(KafkaBenchConfig)
def kafka(**values) -> None:
    """The detector's Kafka plumbing (no-op model) against Kafka's own kafka-consumer-perf-test."""
    from bench.kafka import run

    run(KafkaBenchConfig(**values), _command("kafka"))


@bench.command(
    epilog="""\b
Examples:
  python -m bench e2e --model yunet --cameras 1,2,3,4 --provider cpu          # this machine
  python -m bench e2e --model mogface.onnx --cameras 4,8,10,12 --batch 16 --provider cuda
  python -m bench e2e --model mogface-random.onnx --allow-random-weights --cameras 12 --batch 16 --provider torch,cuda
  python -m bench e2e --model yunet --cameras 50,100,200,300 --replicas 2 --batch 64
  python -m bench e2e --model yunet.onnx --cameras 300 --replicas 4 --batch 128 --frame-size 640x480
  python -m bench e2e --model yunet.onnx --cameras 300 --replicas 4 --batch 128 --producer-cpus 12-15 --profile-s 5
  python -m bench e2e --model yunet.onnx --cameras 300,300,300 --every-count --warm-up-s 10 --frame-size 640x480
  python -m bench e2e --model mogface.onnx --batch 16 --source vtest.avi --produce-arg=--motion-gate --cameras 10,20
""",
    context_settings={"show_default": True},
)
@options(E2EConfig)
def e2e(**values) -> None:
    """Producers -> Kafka -> detector replicas -> events: how many cameras stay under the latency limit."""
    from bench.e2e import run

    run(E2EConfig(**values), _command("e2e"))


@bench.command(
    epilog="""\b
Examples (a broker running: `facestream kafka start`):
  python -m bench backlog --frames 600 --runs 3
  python -m bench backlog --batch 16 --ort-threads 2 --out /tmp/backlog.json
""",
    context_settings={"show_default": True},
)
@options(BacklogBenchConfig)
def backlog(**values) -> None:
    """One CPU detector draining a backlog of frames on a real broker: frames/s from the events' own times.

    The producer first fills a fresh topic with the sample photos, cycled and scaled to --width; then
    the detector runs over the backlog. Throughput is (events - 1) / (last detect_ts - first
    detect_ts), so start-up, the group join and the idle wait at the end do not count."""
    from bench.detector_backlog import run

    run(BacklogBenchConfig(**values), _command("backlog"))
