"""Alembic, run from code: the store (and the dashboard's history) call ``upgrade`` at start, so a new
version's tables are there before anything reads them; no alembic.ini to ship."""

import logging
from pathlib import Path

from sqlalchemy import Engine

MIGRATIONS = Path(__file__).resolve().parent / "migrations"


def upgrade(engine: Engine, revision: str = "head") -> None:
    from alembic import command
    from alembic.config import Config

    logging.getLogger("alembic").setLevel(logging.WARNING)  # its plugin list on every start says nothing

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, revision)
