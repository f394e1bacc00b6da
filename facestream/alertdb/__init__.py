"""The alert store's database: SQLite by default (a file under ``$FACESTREAM_HOME``), PostgreSQL for
deployments, through SQLAlchemy Core with Alembic migrations: the same code and tests on both.
``open_database`` connects and brings the tables up to date; ``writer`` keeps what the alerts topic
says; the dashboard reads through ``queries``.

SQLAlchemy is imported only when a database is used: the services' settings name this package's
defaults, and a machine with only the broker's and the detector's packages (``facestream kafka``, a GPU
host) reads those settings too."""

from typing import Any

SAME_STRANGER = 0.5  # the alert store's --same-stranger: two visits' faces this alike are one stranger

__all__ = ["SAME_STRANGER", "default_url", "open_database"]


def __getattr__(name: str) -> Any:
    if name in ("default_url", "open_database"):
        from facestream.alertdb import engine

        return getattr(engine, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
