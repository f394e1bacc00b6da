"""The live page over the pipeline's topics, served until stopped (``facestream dashboard`` runs it)."""

import logging
import time

import click

from facestream.dashboard.config import DashboardConfig
from facestream.dashboard.teach import Embed

log = logging.getLogger(__name__)


def serve(config: DashboardConfig, embed: Embed | None = None) -> None:
    """Serve the page until SIGINT/SIGTERM; ``embed`` lets it enrol uploaded photos."""
    from prometheus_client import CollectorRegistry

    from facestream import health, kafka_clients, kafka_topics
    from facestream.alertdb import accounts, default_url, open_database
    from facestream.dashboard.app import make_app
    from facestream.dashboard.reader import GroupReader, RecordReader
    from facestream.dashboard.state import DashboardState
    from facestream.gallery import Follower
    from facestream.signals import StopOnSignals

    # A taken port stops it here, before the readers and the search index start threads of their own.
    health.check_free(config.http_port, config.http_host, "the dashboard")
    kafka_clients.check_reachable()
    state = DashboardState(config.frame_rate, config.alerts_kept, config.zones, config.lines)
    readiness, registry = health.Readiness("partitions_assigned"), CollectorRegistry()
    RecordReader(config, state, readiness, registry).start()
    groups = GroupReader(config, state, registry)
    groups.start()
    database = open_database(config.database or default_url())
    if not accounts.any_admin(database):
        log.warning(
            "no admin account in %s: nobody can manage the dashboard's users; create one with "
            "`facestream users add NAME --role admin`",
            database.url.render_as_string(hide_password=True),
        )
    kafka_topics.ensure_topics({config.gallery_topic: 1}, configs={config.gallery_topic: kafka_topics.COMPACTED})
    gallery = Follower(topic=config.gallery_topic).start().gallery  # what the page teaches, and what it shows
    app = make_app(config, state, readiness, registry, database, gallery, embed)
    health.serve_app(app, config.http_port, config.http_host, "the dashboard")
    shown = "127.0.0.1" if config.http_host == "0.0.0.0" else config.http_host
    click.echo(f"dashboard on http://{shown}:{config.http_port}/ (sign in with a `facestream users` account)", err=True)
    with StopOnSignals("stopping") as stop:  # it holds nothing: readers and page just end
        while not stop.requested:
            time.sleep(0.2)
    groups.stop()
