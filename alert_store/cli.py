"""``facestream alert-store``: keep every alert, its life, snapshot and review in a database."""

import click

from facestream.alert_store.config import AlertStoreConfig
from facestream.config import options


@click.command(
    epilog="""\b
Examples:
  facestream alert-store                                    # SQLite in $FACESTREAM_HOME/alerts.db
  facestream alert-store --database postgresql://store:secret@db/facestream
  facestream alert-store --retention-days 90 --max-snapshot-mb 10000 --http-port 9466
  facestream alert-store --sightings --sightings-days 3     # also every face seen, for search by face
""",
    context_settings={"show_default": True},
)
@options(AlertStoreConfig)
def alert_store(**values) -> None:
    """Keep every alert record from Kafka in a database, with its snapshot, exactly once."""
    from facestream.alert_store.service import run

    run(AlertStoreConfig(**values))
