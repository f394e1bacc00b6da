"""Alembic, run from code: the store (and the dashboard's history) call ``upgrade`` at start, so a new
version's tables are there before anything reads them; no alembic.ini to ship."""

import logging
import time
from pathlib import Path

from sqlalchemy import Engine

MIGRATIONS = Path(__file__).resolve().parent / "migrations"


def upgrade(engine: Engine, revision: str = "head", attempts: int = 3) -> None:
    """Bring the tables to ``revision``. The store and the dashboard start together and both upgrade: the
    second waits for the first's transaction, then finds its tables made under it (``already exists``);
    asked again, it reads the new version and has nothing to do."""
    logging.getLogger("alembic").setLevel(logging.WARNING)  # its plugin list on every start says nothing
    from alembic import command
    from alembic.config import Config
    from sqlalchemy.exc import DBAPIError

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    for attempt in range(1, attempts + 1):
        try:
            with engine.begin() as connection:
                config.attributes["connection"] = connection
                command.upgrade(config, revision)
            return
        except DBAPIError:
            if attempt == attempts:
                raise
            time.sleep(0.2 * attempt)
