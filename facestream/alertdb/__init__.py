"""The alert store's database: SQLite by default (a file under ``$FACESTREAM_HOME``), PostgreSQL for
deployments, through SQLAlchemy Core with Alembic migrations: the same code and tests on both.
``open_database`` connects and brings the tables up to date; ``writer`` keeps what the alerts topic
says; the dashboard reads through ``queries``."""

from facestream.alertdb.engine import default_url, open_database

__all__ = ["default_url", "open_database"]
