"""Recurring strangers: each stranger alert a visit of one, under an automatic label.

Revision ID: 0007
Revises: 0006
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

ID = sa.BigInteger().with_variant(sa.Integer, "sqlite")


def upgrade() -> None:
    op.create_table(
        "strangers",
        sa.Column("stranger_id", ID, primary_key=True, autoincrement=True),
        sa.Column("name", sa.String(200)),
        sa.Column("embedder", sa.String(200), nullable=False),
        sa.Column("face", sa.LargeBinary),
        sa.Column("visits", sa.Integer, nullable=False),
        sa.Column("first_ts_ns", sa.BigInteger),
        sa.Column("last_ts_ns", sa.BigInteger),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_strangers_last", "strangers", ["last_ts_ns"])
    op.create_table(
        "stranger_visits",
        sa.Column("alert_id", sa.String(64), primary_key=True),
        sa.Column("stranger_id", ID, nullable=False),
        sa.Column("camera_id", sa.String(255), nullable=False),
        sa.Column("started_ts_ns", sa.BigInteger, nullable=False),
        sa.Column("updated_ts_ns", sa.BigInteger, nullable=False),
        sa.Column("face", sa.LargeBinary, nullable=False),
        sa.Column("split_from", sa.JSON, nullable=False),
    )
    op.create_index("ix_stranger_visits_stranger", "stranger_visits", ["stranger_id", "started_ts_ns"])


def downgrade() -> None:
    op.drop_index("ix_stranger_visits_stranger", "stranger_visits")
    op.drop_table("stranger_visits")
    op.drop_index("ix_strangers_last", "strangers")
    op.drop_table("strangers")
