"""Every face with an embedding the detectors saw, for search by face.

Revision ID: 0005
Revises: 0004
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "sightings",
        sa.Column(
            "sighting_id",
            sa.BigInteger().with_variant(sa.Integer, "sqlite"),
            primary_key=True,
            autoincrement=True,
        ),
        sa.Column("event_id", sa.String(64), nullable=False),
        sa.Column("face", sa.Integer, nullable=False),
        sa.Column("camera_id", sa.String(255), nullable=False),
        sa.Column("frame_seq", sa.BigInteger, nullable=False),
        sa.Column("capture_ts_ns", sa.BigInteger, nullable=False),
        sa.Column("box", sa.JSON, nullable=False),
        sa.Column("score", sa.Float, nullable=False),
        sa.Column("embedder", sa.String(200), nullable=False),
        sa.Column("embedding", sa.LargeBinary, nullable=False),
        sa.Column("source", sa.String(300), nullable=False),
        sa.UniqueConstraint("event_id", "face", name="uq_sightings_face"),
        sqlite_autoincrement=True,  # ids never reused: the index follows the table by id
    )
    op.create_index("ix_sightings_capture", "sightings", ["capture_ts_ns"])
    op.create_index("ix_sightings_camera_capture", "sightings", ["camera_id", "capture_ts_ns"])


def downgrade() -> None:
    op.drop_index("ix_sightings_camera_capture", "sightings")
    op.drop_index("ix_sightings_capture", "sightings")
    op.drop_table("sightings")
