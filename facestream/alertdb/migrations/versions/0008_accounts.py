"""Accounts with roles and their sessions; the search audit becomes the audit of every look at a face
(with the address it came from); a reviewer's comment on an alert.

Revision ID: 0008
Revises: 0007
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "users",
        sa.Column("name", sa.String(64), primary_key=True),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("password_hash", sa.String(200), nullable=False),
        sa.Column("token_sha256", sa.String(64), unique=True),
        sa.Column("disabled", sa.Boolean, nullable=False),
        sa.Column("created_ts_ns", sa.BigInteger, nullable=False),
        sa.Column("changed_ts_ns", sa.BigInteger, nullable=False),
    )
    op.create_table(
        "sessions",
        sa.Column("session_sha256", sa.String(64), primary_key=True),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("csrf", sa.String(64), nullable=False),
        sa.Column("address", sa.String(64)),
        sa.Column("started_ts_ns", sa.BigInteger, nullable=False),
        sa.Column("seen_ts_ns", sa.BigInteger, nullable=False),
    )
    op.create_index("ix_sessions_name", "sessions", ["name"])
    op.drop_index("ix_search_audit_at", "search_audit")
    op.rename_table("search_audit", "audit")
    op.add_column("audit", sa.Column("address", sa.String(64)))
    op.create_index("ix_audit_at", "audit", ["at_ts_ns"])
    op.add_column("alerts", sa.Column("comment", sa.Text))


def downgrade() -> None:
    op.drop_column("alerts", "comment")
    op.drop_index("ix_audit_at", "audit")
    op.drop_column("audit", "address")
    op.rename_table("audit", "search_audit")
    op.create_index("ix_search_audit_at", "search_audit", ["at_ts_ns"])
    op.drop_index("ix_sessions_name", "sessions")
    op.drop_table("sessions")
    op.drop_table("users")
