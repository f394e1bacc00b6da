"""Connecting: a URL as users write it (``sqlite:///path``, ``postgresql://user@host/db``) to an engine
with the tables up to date. SQLite gets write-ahead logging, so the dashboard reads while the store
writes, and waits for a lock instead of failing at once."""

from pathlib import Path

from sqlalchemy import Engine, create_engine, event

from facestream import paths
from facestream.errors import ConfigError
from facestream.redact import redact

SQLITE_BUSY_MS = 10_000
DRIVERS = {"postgresql": "postgresql+psycopg", "postgres": "postgresql+psycopg"}  # psycopg 3


def default_url() -> str:
    return f"sqlite:///{paths.home() / 'alerts.db'}"


def open_database(url: str, migrate: bool = True) -> Engine:
    """An engine on ``url`` (its tables made or upgraded by the migrations unless ``migrate`` is false);
    ConfigError, with the URL's credentials masked, if it cannot be reached."""
    scheme, sep, rest = url.partition("://")
    if not sep or scheme.split("+")[0] not in ("sqlite", "postgresql", "postgres"):
        raise ConfigError(f"--database must be sqlite:///PATH or postgresql://..., got {redact(url)!r}")
    engine = create_engine(f"{DRIVERS.get(scheme, scheme)}://{rest}", pool_pre_ping=True)
    if engine.dialect.name == "sqlite":
        if engine.url.database:
            Path(engine.url.database).parent.mkdir(parents=True, exist_ok=True)
        event.listen(engine, "connect", _sqlite_settings)
    if migrate:
        from facestream.alertdb.migrate import upgrade

        try:
            upgrade(engine)
        except Exception as exc:  # the driver's own errors, one type per database
            raise ConfigError(
                f"cannot open the alert database {redact(url)}: {redact(str(exc)).splitlines()[0]}"
            ) from None
    return engine


def _sqlite_settings(connection, _record) -> None:
    cursor = connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_MS}")
    cursor.execute("PRAGMA synchronous=NORMAL")  # durable across a crash of the process in WAL mode
    cursor.close()
