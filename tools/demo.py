"""``facestream demo``: the whole path, live, on one machine.

Starts the local Kafka broker, fetches YuNet and the sample photos, runs a detector and a
producer streaming the photos as two cameras, and prints every detection event as it arrives.
The detector and the producer are the same commands a deployment runs, in child processes;
their logs go to files so the terminal shows the events.
"""

import subprocess
import time
from pathlib import Path

import click

from facestream import kafka_clients, paths


@click.command(
    epilog="\b\nExamples:\n  facestream demo\n  facestream demo --duration 0 --fps 5   # until Ctrl-C",
    context_settings={"show_default": True},
)
@click.option("--duration", type=click.FloatRange(min=0), default=30.0, help="Seconds to stream (0: until Ctrl-C).")
@click.option("--fps", type=click.FloatRange(min=0.1), default=2.0, help="Frames per second per camera.")
@click.option("--batch", type=click.IntRange(min=1), default=4)
def demo(duration: float, fps: float, batch: int) -> None:
    """Stream real face photos as two cameras through Kafka and print the detections live."""
    from facestream import samples
    from facestream.detector_service.config import detector_command
    from facestream.producers.config import producer_command
    from facestream.tools.events import describe

    _ensure_broker()
    click.echo("fetching the model and the sample photos (first time only) ...", err=True)
    from facestream.detector_service.models import resolve

    resolve("yunet")
    cameras = {"portraits": samples.portraits_dir(), "annotated": samples.annotated_dir()}
    log_dir = paths.home() / "demo"
    log_dir.mkdir(parents=True, exist_ok=True)
    started_ns = time.time_ns()
    detector = _spawn("detector", log_dir, detector_command(group="facestream-demo", batch=batch, max_wait_ms=100.0))
    producer = _spawn("producer", log_dir, producer_command(list(cameras.items()), fps=fps, loop=True))
    click.echo(f"streaming {len(cameras)} cameras at {fps:g} fps; logs in {log_dir}; Ctrl-C stops", err=True)
    counts: dict[str, int] = {}
    faces: dict[str, int] = {}
    try:
        for event in _events_since(started_ns, duration, [detector, producer]):
            click.echo(describe(event))
            counts[event.camera_id] = counts.get(event.camera_id, 0) + 1
            faces[event.camera_id] = faces.get(event.camera_id, 0) + len(event.faces)
    except KeyboardInterrupt:
        pass
    finally:
        for proc in (producer, detector):
            _stop(proc)
    for camera in cameras:
        click.echo(f"{camera}: {counts.get(camera, 0)} events, {faces.get(camera, 0)} faces", err=True)
    if not counts:
        raise click.ClickException(f"no detection events arrived; see the logs in {log_dir}")
    click.echo("Kafka keeps running; `facestream kafka stop` stops it.", err=True)


def _ensure_broker() -> None:
    """Start the local broker (unless KAFKA_BOOTSTRAP names one) and create the demo's topics."""
    from facestream.schemas import DEAD_LETTER_TOPIC, DETECTIONS_TOPIC, FRAMES_TOPIC

    if kafka_clients.external_bootstrap():
        kafka_clients.check_reachable()
    else:
        from facestream.broker import LocalBroker

        LocalBroker().start()
    kafka_clients.ensure_topics({FRAMES_TOPIC: 4, DETECTIONS_TOPIC: 4, DEAD_LETTER_TOPIC: 1})


def _spawn(name: str, log_dir: Path, cmd: list[str]) -> subprocess.Popen:
    log = open(log_dir / f"{name}.log", "wb")
    return subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)


def _events_since(started_ns: int, duration: float, children: list[subprocess.Popen]):
    """Detection events made after ``started_ns``, until ``duration`` passes or a child dies."""
    from facestream.schemas import DETECTIONS_TOPIC, unpack_detection

    end = time.monotonic() + duration if duration else None

    def done() -> bool:
        for child in children:
            if child.poll() is not None:
                raise click.ClickException(f"{' '.join(child.args[:3])} exited with code {child.returncode}")
        return end is not None and time.monotonic() >= end

    for msg in kafka_clients.records(DETECTIONS_TOPIC, done):
        event = unpack_detection(msg.value())
        if event.detect_ts_ns >= started_ns:
            yield event


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
