"""Retention by kind: how long the store keeps each kind, and what its last pass removed.

Revision ID: 0009
Revises: 0008
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "retention",
        sa.Column("kind", sa.String(16), primary_key=True),
        sa.Column("days", sa.Float, nullable=False),
        sa.Column("place", sa.String(200), nullable=False),
        sa.Column("applied_by", sa.String(255), nullable=False),
        sa.Column("applied_ts_ns", sa.BigInteger, nullable=False),
        sa.Column("removed", sa.BigInteger, nullable=False),
        sa.Column("removed_total", sa.BigInteger, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("retention")
