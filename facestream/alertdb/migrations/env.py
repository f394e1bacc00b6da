"""Alembic's environment: the connection comes from ``migrate.upgrade``; SQLite alters tables in
batches (it cannot alter a column in place)."""

from alembic import context

from facestream.alertdb.schema import metadata

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=metadata, render_as_batch=connection.dialect.name == "sqlite")
with context.begin_transaction():
    context.run_migrations()
