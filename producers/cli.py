"""``facestream produce``: stream cameras, videos or images to the frames topic."""

import click

from facestream.config import options
from facestream.producers.config import ProducerConfig


@click.command(
    epilog="""\b
Examples:
  facestream produce --camera door --source door.mp4 --fps 15 --loop
  facestream produce --camera lobby --source rtsp://10.0.0.7/stream1 --fps 10
  facestream produce --camera gate --source rtsp://user:pass@10.0.0.8/s1 --camera yard --source rtsp://10.0.0.9/s1 \
      --fps 5 --http-port 9465 --stall-s 10
  facestream produce --camera park --source rtsp://10.0.0.10/s1 --fps 1 --live-decode keyframes
  facestream produce --camera a --source photos/ --camera b --source 'shots/*.jpg' --fps 2 --loop
  facestream produce --camera usb --source 0 --max-width 960 --jpeg-quality 80
  facestream produce --camera sim --source photos/ --frame-size 640x480 --fps 30 --loop
  facestream produce --camera yard --source rtsp://10.0.0.8/s1 --motion-gate --keyframe-s 10
  facestream produce --camera door --source rtsp://10.0.0.7/s1 --placement cameras.txt   # partitions even
""",
    context_settings={"show_default": True},
)
@click.option(
    "--camera", "cameras", multiple=True, required=True, help="Camera id (the Kafka key); repeat with --source."
)
@click.option(
    "--source",
    "sources",
    multiple=True,
    required=True,
    help="Video file, image file/folder/glob, camera index or RTSP/HTTP URL; one per --camera.",
)
@options(ProducerConfig)
def produce(cameras: tuple[str, ...], sources: tuple[str, ...], **values) -> None:
    """Publish JPEG frames of one or more cameras to Kafka, paced to --fps.

    A live camera (an RTSP/HTTP URL or a camera index) is read by a thread of its own that keeps only its
    newest picture, so the frames sent are fresh at any --fps; one that drops, stalls or cannot be opened
    is tried again, for ever unless --max-attempts, while the others stream on. Each camera's state goes
    to --status-topic (the camera_offline alert reads it), the stats line and /metrics."""
    from facestream.producers.streamer import Streamer

    if len(cameras) != len(sources):
        raise click.UsageError(f"give one --source per --camera ({len(cameras)} cameras, {len(sources)} sources)")
    if len(set(cameras)) != len(cameras):
        raise click.UsageError("camera ids must be unique")
    streamer = Streamer(list(zip(cameras, sources)), ProducerConfig(**values))
    stats = streamer.run()
    if stats.errors:
        raise click.exceptions.Exit(1)
