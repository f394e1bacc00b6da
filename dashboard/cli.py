"""``facestream dashboard``: the live page over the pipeline's topics."""

import logging
import time

import click

from facestream.config import options
from facestream.dashboard.config import DashboardConfig

log = logging.getLogger(__name__)
LOOPBACK = ("127.0.0.1", "localhost", "::1")


@click.command(
    epilog="""\b
Examples:
  facestream dashboard                                   # http://127.0.0.1:8080
  facestream dashboard --frames-topic frames,frames.corridor
  FACESTREAM_DASHBOARD_TOKEN=s3cret facestream dashboard --host 0.0.0.0
                                                         # then open http://HOST:8080/?token=s3cret
""",
    context_settings={"show_default": True},
)
@options(DashboardConfig)
def dashboard(**values) -> None:
    """Serve a live web page of the cameras (latest frames with faces and poses drawn, rate,
    latency), the alerts and the consumer groups' members and lag, and the history of the alert store
    (/history) to review. It reads Kafka, writes reviews to the alert database, and writes the gallery
    when someone teaches it from an alert ("this is NAME", "not this person", undo)."""
    from prometheus_client import CollectorRegistry

    from facestream import health, kafka_clients
    from facestream.alertdb import default_url, open_database
    from facestream.dashboard.app import make_app
    from facestream.dashboard.reader import GroupReader, RecordReader
    from facestream.dashboard.state import DashboardState
    from facestream.gallery import Follower
    from facestream.signals import StopOnSignals

    config = DashboardConfig(**values)
    if config.host not in LOOPBACK and not config.token:
        log.warning(
            "the dashboard listens on %s without a token: anyone who reaches this port sees the cameras "
            "(set --token or FACESTREAM_DASHBOARD_TOKEN)",
            config.host,
        )
    kafka_clients.check_reachable()
    state = DashboardState(config.frame_rate, config.alerts_kept, config.zones)
    readiness, registry = health.Readiness("partitions_assigned"), CollectorRegistry()
    RecordReader(config, state, readiness, registry).start()
    GroupReader(config, state).start()
    database = open_database(config.database or default_url())
    kafka_clients.ensure_topics({config.gallery_topic: 1}, configs={config.gallery_topic: kafka_clients.COMPACTED})
    gallery = Follower(topic=config.gallery_topic).start().gallery  # what the page teaches, and what it shows
    app = make_app(config, state, readiness, registry, database, gallery)
    health.serve_app(app, config.port, config.host, "the dashboard")
    shown = "127.0.0.1" if config.host == "0.0.0.0" else config.host
    click.echo(f"dashboard on http://{shown}:{config.port}/" + ("?token=..." if config.token else ""), err=True)
    with StopOnSignals("stopping") as stop:  # it holds nothing: readers and page just end
        while not stop.requested:
            time.sleep(0.2)
