"""``facestream produce``: stream cameras, videos or images to the frames topic."""

import click

from facestream.click_types import size
from facestream.schemas import FRAMES_TOPIC


@click.command(
    epilog="""\b
Examples:
  facestream produce --camera door --source door.mp4 --fps 15 --loop
  facestream produce --camera lobby --source rtsp://10.0.0.7/stream1 --fps 10
  facestream produce --camera a --source photos/ --camera b --source 'shots/*.jpg' --fps 2 --loop
  facestream produce --camera usb --source 0 --max-width 960 --jpeg-quality 80
  facestream produce --camera sim --source photos/ --frame-size 640x480 --fps 30 --loop
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
@click.option("--fps", type=float, default=10.0, help="Frames per second per camera (0: as fast as possible).")
@click.option("--loop", is_flag=True, help="Start a file source again at its end.")
@click.option("--max-frames", type=click.IntRange(min=1), default=None, help="Stop each camera after N frames.")
@click.option("--jpeg-quality", type=click.IntRange(1, 100), default=85)
@click.option("--max-width", type=click.IntRange(min=0), default=1280, help="Scale wider frames down (0: never).")
@click.option(
    "--frame-size",
    callback=size,
    default=None,
    help="Send every frame at exactly WIDTHxHEIGHT, scaled to cover it and centre-cropped, as a camera "
    "of that resolution would frame it (instead of --max-width).",
)
@click.option("--topic", default=FRAMES_TOPIC, help="Topic to publish frames to.")
@click.option(
    "--start-seq",
    type=click.IntRange(min=0),
    default=None,
    help="First frame_seq of every camera (default: the clock in µs, so restarts never reuse one).",
)
@click.option("--stats-interval", type=float, default=2.0, help="Seconds between stats lines.")
def produce(
    cameras: tuple[str, ...],
    sources: tuple[str, ...],
    fps: float,
    loop: bool,
    max_frames: int | None,
    jpeg_quality: int,
    max_width: int,
    frame_size: tuple[int, int] | None,
    topic: str,
    start_seq: int | None,
    stats_interval: float,
) -> None:
    """Publish JPEG frames of one or more cameras to Kafka, paced to --fps."""
    from facestream.producers.encoder import JpegEncoder
    from facestream.producers.streamer import Streamer

    if len(cameras) != len(sources):
        raise click.UsageError(f"give one --source per --camera ({len(cameras)} cameras, {len(sources)} sources)")
    if len(set(cameras)) != len(cameras):
        raise click.UsageError("camera ids must be unique")
    streamer = Streamer(
        list(zip(cameras, sources)),
        fps=fps,
        topic=topic,
        encoder=JpegEncoder(quality=jpeg_quality, max_width=max_width, frame_size=frame_size),
        loop=loop,
        max_frames=max_frames,
        start_seq=start_seq,
        stats_interval_s=stats_interval,
    )
    stats = streamer.run()
    if stats.errors:
        raise click.exceptions.Exit(1)
