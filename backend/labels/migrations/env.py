"""Alembic environment for the label store: always run from ``backend.labels.store.migrate`` with an open
connection in ``config.attributes["connection"]`` (no alembic.ini, no URL here)."""

from alembic import context

connection = context.config.attributes["connection"]
context.configure(connection=connection, render_as_batch=True, transaction_per_migration=False)
with context.begin_transaction():
    context.run_migrations()
