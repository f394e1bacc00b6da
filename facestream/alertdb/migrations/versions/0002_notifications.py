"""The notifier's tables: messages owed to targets with their delivery, and each target's rule state.

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "notify_deliveries",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("group_id", sa.String(255), nullable=False),
        sa.Column("target", sa.String(255), nullable=False),
        sa.Column("alert_id", sa.String(64), nullable=False),
        sa.Column("state", sa.String(8), nullable=False),
        sa.Column("updated_ts_ns", sa.BigInteger, nullable=False),
        sa.Column("payload", sa.LargeBinary, nullable=False),
        sa.Column("status", sa.String(8), nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("next_try_ns", sa.BigInteger, nullable=False),
        sa.Column("last_error", sa.Text),
        sa.Column("sent_ts_ns", sa.BigInteger),
        sa.UniqueConstraint(
            "group_id", "target", "alert_id", "state", "updated_ts_ns", name="uq_notify_deliveries_record"
        ),
    )
    op.create_index("ix_notify_deliveries_due", "notify_deliveries", ["group_id", "target", "status", "next_try_ns"])
    op.create_table(
        "notify_gates",
        sa.Column("group_id", sa.String(255), primary_key=True),
        sa.Column("target", sa.String(255), primary_key=True),
        sa.Column("state", sa.JSON, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("notify_gates")
    op.drop_table("notify_deliveries")
