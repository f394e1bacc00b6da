"""The first tables: alerts, their records, snapshots and the consumer's offsets.

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "alerts",
        sa.Column("alert_id", sa.String(64), primary_key=True),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("camera_id", sa.String(255), nullable=False),
        sa.Column("state", sa.String(8), nullable=False),
        sa.Column("started_ts_ns", sa.BigInteger, nullable=False),
        sa.Column("updated_ts_ns", sa.BigInteger, nullable=False),
        sa.Column("ended_ts_ns", sa.BigInteger),
        sa.Column("count", sa.Integer, nullable=False),
        sa.Column("reason", sa.Text),
        sa.Column("evidence", sa.JSON, nullable=False),
        sa.Column("records", sa.Integer, nullable=False),
        sa.Column("reviewed_ts_ns", sa.BigInteger),
        sa.Column("reviewed_by", sa.String(255)),
    )
    op.create_index("ix_alerts_updated", "alerts", ["updated_ts_ns"])
    op.create_index("ix_alerts_camera_updated", "alerts", ["camera_id", "updated_ts_ns"])
    op.create_index("ix_alerts_kind_updated", "alerts", ["kind", "updated_ts_ns"])
    op.create_table(
        "alert_records",
        sa.Column("alert_id", sa.String(64), primary_key=True),
        sa.Column("state", sa.String(8), primary_key=True),
        sa.Column("updated_ts_ns", sa.BigInteger, primary_key=True),
        sa.Column("payload", sa.LargeBinary, nullable=False),
        sa.Column("source", sa.String(300), nullable=False),
    )
    op.create_table(
        "alert_snapshots",
        sa.Column("alert_id", sa.String(64), primary_key=True),
        sa.Column("status", sa.String(8), nullable=False),
        sa.Column("jpeg", sa.LargeBinary),
        sa.Column("bytes", sa.Integer, nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("stored_ts_ns", sa.BigInteger, nullable=False),
    )
    op.create_table(
        "consumer_offsets",
        sa.Column("group_id", sa.String(255), primary_key=True),
        sa.Column("topic", sa.String(255), primary_key=True),
        sa.Column("partition", sa.Integer, primary_key=True),
        sa.Column("next_offset", sa.BigInteger, nullable=False),
    )


def downgrade() -> None:
    for table in ("consumer_offsets", "alert_snapshots", "alert_records", "alerts"):
        op.drop_table(table)
