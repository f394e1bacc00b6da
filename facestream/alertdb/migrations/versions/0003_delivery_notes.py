"""What the rules add to an owed message: for a state target, the open alerts of its camera and kind
after the record (decided with the offsets, so a replay publishes the same count).

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("notify_deliveries") as table:
        table.add_column(sa.Column("note", sa.JSON))


def downgrade() -> None:
    with op.batch_alter_table("notify_deliveries") as table:
        table.drop_column("note")
