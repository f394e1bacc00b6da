"""Where the face (or person) is in a kept snapshot, so that the pages can show it cropped: a
stranger's best face in a list, not the whole frame.

Revision ID: 0010
Revises: 0009
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("alert_snapshots") as table:
        table.add_column(sa.Column("box", sa.JSON))


def downgrade() -> None:
    with op.batch_alter_table("alert_snapshots") as table:
        table.drop_column("box")
