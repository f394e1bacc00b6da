"""The alert store's tables (SQLAlchemy Core): one row per alert with its latest state and review,
every record of its life, its snapshot, and the offsets of the alerts topic the rows came from
(written in the same transaction, as Kafka Connect's sinks do, so a crash loses and doubles nothing);
the notifier's: each message owed to a target, with its delivery, and each target's rule state; and
every face with an embedding the detectors saw (a sighting), for search by face; every look at a
face and every change people made (the audit log); recurring strangers, each stranger alert a visit
of one (``strangers.py``); and the dashboard's accounts and their sessions (``accounts.py``).

Times are Unix nanoseconds (BigInteger), as on the wire. The same tables on SQLite and PostgreSQL;
``migrations/`` makes and changes them (Alembic).
"""

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    Float,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

from facestream.schemas import ModelRef

metadata = MetaData()


def embedder_name(model: ModelRef) -> str:
    """One embedder's name in the rows: faces compare only with faces of the same weights."""
    return f"{model.name}@{model.version}:{model.weights_sha256[:16]}"


alerts = Table(
    "alerts",
    metadata,
    Column("alert_id", String(64), primary_key=True),
    Column("kind", String(32), nullable=False),
    Column("camera_id", String(255), nullable=False),
    Column("state", String(8), nullable=False),  # its latest record's
    Column("started_ts_ns", BigInteger, nullable=False),
    Column("updated_ts_ns", BigInteger, nullable=False),
    Column("ended_ts_ns", BigInteger),
    Column("count", Integer, nullable=False),
    Column("reason", Text),
    Column("zone", String(200)),  # the zone it names, if any
    Column("evidence", JSON, nullable=False),  # the latest record's sightings, as their fields
    Column("records", Integer, nullable=False),  # distinct records of it stored
    Column("reviewed_ts_ns", BigInteger),
    Column("reviewed_by", String(255)),
    Column("comment", Text),  # the reviewer's words
    Index("ix_alerts_updated", "updated_ts_ns"),
    Index("ix_alerts_camera_updated", "camera_id", "updated_ts_ns"),
    Index("ix_alerts_kind_updated", "kind", "updated_ts_ns"),
)

records = Table(
    "alert_records",
    metadata,
    Column("alert_id", String(64), primary_key=True),
    Column("state", String(8), primary_key=True),
    Column("updated_ts_ns", BigInteger, primary_key=True),
    Column("payload", LargeBinary, nullable=False),  # the record as it came (msgpack)
    Column("source", String(300), nullable=False),  # topic/partition@offset of its first copy
)

snapshots = Table(
    "alert_snapshots",
    metadata,
    Column("alert_id", String(64), primary_key=True),
    Column("status", String(8), nullable=False),  # kept, gone (no longer in Kafka), none (no evidence)
    Column("jpeg", LargeBinary),
    Column("bytes", Integer, nullable=False),
    Column("attempts", Integer, nullable=False),
    Column("stored_ts_ns", BigInteger, nullable=False),
    Column("box", JSON),  # [x0, y0, x1, y1] of the sighting drawn on it, in its pixels; None without one
)

offsets = Table(
    "consumer_offsets",
    metadata,
    Column("group_id", String(255), primary_key=True),
    Column("topic", String(255), primary_key=True),
    Column("partition", Integer, primary_key=True),
    Column("next_offset", BigInteger, nullable=False),
)

deliveries = Table(
    "notify_deliveries",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("group_id", String(255), nullable=False),
    Column("target", String(255), nullable=False),
    Column("alert_id", String(64), nullable=False),
    Column("state", String(8), nullable=False),
    Column("updated_ts_ns", BigInteger, nullable=False),
    Column("payload", LargeBinary, nullable=False),  # the alert record the message is made from
    Column("note", JSON),  # what the rules added: a state target's open alerts of the camera and kind
    Column("status", String(8), nullable=False),  # pending, sent
    Column("attempts", Integer, nullable=False),
    Column("next_try_ns", BigInteger, nullable=False),
    Column("last_error", Text),
    Column("sent_ts_ns", BigInteger),
    UniqueConstraint("group_id", "target", "alert_id", "state", "updated_ts_ns", name="uq_notify_deliveries_record"),
    Index("ix_notify_deliveries_due", "group_id", "target", "status", "next_try_ns"),
)

gates = Table(
    "notify_gates",
    metadata,
    Column("group_id", String(255), primary_key=True),
    Column("target", String(255), primary_key=True),
    Column("state", JSON, nullable=False),  # cooldowns, the last hour's messages, what was held back
)

sightings = Table(
    "sightings",
    metadata,
    # the nearest-neighbour index's key: 64-bit, and a rowid alias on SQLite
    Column("sighting_id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True),
    Column("event_id", String(64), nullable=False),
    Column("face", Integer, nullable=False),  # its place among the event's faces
    Column("camera_id", String(255), nullable=False),
    Column("frame_seq", BigInteger, nullable=False),  # with the camera and capture time: the evidence frame
    Column("capture_ts_ns", BigInteger, nullable=False),
    Column("box", JSON, nullable=False),  # x0, y0, x1, y1 in frame pixels, as on the wire
    Column("score", Float, nullable=False),
    Column("embedder", String(200), nullable=False),  # only faces of one embedder compare
    Column("embedding", LargeBinary, nullable=False),  # unit vector, little-endian float16, as on the wire
    Column("source", String(300), nullable=False),  # topic/partition@offset of its event
    UniqueConstraint("event_id", "face", name="uq_sightings_face"),
    Index("ix_sightings_capture", "capture_ts_ns"),
    Index("ix_sightings_camera_capture", "camera_id", "capture_ts_ns"),
    # SQLite's AUTOINCREMENT: an id is never given again once its row is deleted (an erasure of the
    # newest rows), since the index follows the table by id; PostgreSQL's sequence never does
    sqlite_autoincrement=True,
)

audit = Table(
    "audit",
    metadata,
    Column("audit_id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True),
    Column("at_ts_ns", BigInteger, nullable=False),
    Column("who", String(255), nullable=False),  # the account's name
    Column("address", String(64)),  # where the request came from (the client's, behind a trusted proxy)
    Column("kind", String(16), nullable=False),  # audit.KINDS: a look at a face, a search, or a change
    Column("subject", String(300), nullable=False),  # what: ids (an alert, a sighting, a person), never an image
    Column("since_ts_ns", BigInteger),
    Column("min_similarity", Float),
    Column("results", Integer, nullable=False),  # faces shown, sightings found (or forgotten), rows changed
    Index("ix_audit_at", "at_ts_ns"),
)

users = Table(
    "users",
    metadata,
    Column("name", String(64), primary_key=True),
    Column("role", String(16), nullable=False),  # accounts.ROLES
    Column("password_hash", String(200), nullable=False),  # argon2id, with its own salt and parameters
    Column("token_sha256", String(64), unique=True),  # of the API token, if one was made
    Column("disabled", Boolean, nullable=False),
    Column("created_ts_ns", BigInteger, nullable=False),
    Column("changed_ts_ns", BigInteger, nullable=False),
)

sessions = Table(
    "sessions",
    metadata,
    Column("session_sha256", String(64), primary_key=True),  # of the cookie's value: a stolen table opens nothing
    Column("name", String(64), nullable=False),
    Column("csrf", String(64), nullable=False),  # what a state-changing request of this session carries
    Column("address", String(64)),
    Column("started_ts_ns", BigInteger, nullable=False),
    Column("seen_ts_ns", BigInteger, nullable=False),
    Index("ix_sessions_name", "name"),
)

strangers = Table(
    "strangers",
    metadata,
    Column("stranger_id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True),
    Column("name", String(200)),  # given on the dashboard; none while unknown (shown as unknown-<id>)
    Column("embedder", String(200), nullable=False),  # only faces of one embedder compare
    Column("face", LargeBinary),  # the mean of its visits' faces: a unit vector, little-endian float16
    Column("visits", Integer, nullable=False),
    Column("first_ts_ns", BigInteger),
    Column("last_ts_ns", BigInteger),
    Index("ix_strangers_last", "last_ts_ns"),
    sqlite_autoincrement=True,  # a label, once given, is never given again
)

stranger_visits = Table(
    "stranger_visits",
    metadata,
    Column("alert_id", String(64), primary_key=True),  # the stranger alert that is the visit
    Column("stranger_id", BigInteger().with_variant(Integer, "sqlite"), nullable=False),
    Column("camera_id", String(255), nullable=False),
    Column("started_ts_ns", BigInteger, nullable=False),
    Column("updated_ts_ns", BigInteger, nullable=False),
    Column("face", LargeBinary, nullable=False),  # the alert's latest face
    Column("split_from", JSON, nullable=False),  # strangers people said it is not ("not this person")
    Index("ix_stranger_visits_stranger", "stranger_id", "started_ts_ns"),
)

retention = Table(
    "retention",
    metadata,
    Column("kind", String(16), primary_key=True),  # retention.KINDS
    Column("days", Float, nullable=False),
    Column("place", String(200), nullable=False),  # the tables it is kept in
    Column("applied_by", String(255), nullable=False),  # the service (its group) that applies it
    Column("applied_ts_ns", BigInteger, nullable=False),  # its last pass
    Column("removed", BigInteger, nullable=False),  # rows removed by that pass
    Column("removed_total", BigInteger, nullable=False),  # since the kind was first applied here
)
