"""The zone an alert names (rules limited to zones, loitering), so the history can show and filter it.

Revision ID: 0004
Revises: 0003
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("alerts") as table:
        table.add_column(sa.Column("zone", sa.String(200)))


def downgrade() -> None:
    with op.batch_alter_table("alerts") as table:
        table.drop_column("zone")
