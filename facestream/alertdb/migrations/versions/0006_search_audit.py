"""Every search by face and every erasure, for the audit log.

Revision ID: 0006
Revises: 0005
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "search_audit",
        sa.Column(
            "audit_id",
            sa.BigInteger().with_variant(sa.Integer, "sqlite"),
            primary_key=True,
            autoincrement=True,
        ),
        sa.Column("at_ts_ns", sa.BigInteger, nullable=False),
        sa.Column("who", sa.String(255), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("subject", sa.String(300), nullable=False),
        sa.Column("since_ts_ns", sa.BigInteger),
        sa.Column("min_similarity", sa.Float),
        sa.Column("results", sa.Integer, nullable=False),
    )
    op.create_index("ix_search_audit_at", "search_audit", ["at_ts_ns"])


def downgrade() -> None:
    op.drop_index("ix_search_audit_at", "search_audit")
    op.drop_table("search_audit")
