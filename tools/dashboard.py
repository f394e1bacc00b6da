"""``facestream dashboard``: the dashboard service, able to enrol uploaded photos with the detector's own
models (the command combines the two services; neither imports the other)."""

import click

from facestream.config import options
from facestream.dashboard.config import DashboardConfig


@click.command(
    epilog="""\b
Examples:
  facestream dashboard                                   # http://127.0.0.1:8080
  facestream dashboard --frames-topic frames,frames.corridor
  facestream users add ana --role admin && facestream dashboard --http-host 0.0.0.0
                                                         # then sign in as ana at http://HOST:8080/
  facestream dashboard --trusted-proxies 127.0.0.1 --user-header Remote-User   # behind an SSO proxy
""",
    context_settings={"show_default": True},
)
@options(DashboardConfig)
def dashboard(**values) -> None:
    """Serve a live web page of the cameras (latest frames with faces and poses drawn, rate,
    latency), the alerts and the consumer groups' members and lag, and the history of the alert store
    (/history) to review. It reads Kafka, writes reviews to the alert database, and writes the gallery
    when someone teaches it from an alert ("this is NAME", "not this person", undo) or enrols a photo."""
    from facestream.dashboard.serve import serve

    serve(DashboardConfig(**values), embed=_embed_photos)


def _embed_photos(photos: list[tuple[str, bytes]]):
    """Uploaded photos' faces, by the detector's default model with embeddings on this machine's CPU."""
    from facestream.detector_service.config import DetectorConfig
    from facestream.tools.gallery import photo_faces

    return photo_faces(photos, DetectorConfig(provider="cpu"))
