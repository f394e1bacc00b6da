"""The audit log: every look at a face (an evidence frame, a snapshot, a clip, a search's frame, a
journey, a search), every change people made (enrol, teach, forget, review, a user's account)
and every sign-in: who, when, from where, what (ids, never an image), how many.

Biometric data must be accounted for, so a look is written down before its face is shown, and the log
is kept with the sightings (one database, one backup). Nothing changes a record once written; the
alert store deletes those older than their retention. The admin page shows it and exports it (CSV, JSON).
"""

import csv
import io
import time
from dataclasses import asdict, dataclass, field

from sqlalchemy import Engine, delete, insert, select

from facestream.alertdb.schema import audit

LOOKS = ("evidence", "snapshot", "clip", "frame", "live")  # a face shown
SEARCHES = ("photo", "alert", "person", "journey")  # sightings found
CHANGES = ("forget", "name", "split", "enrol", "teach", "not-person", "undo", "review", "user", "token")
SIGN_INS = ("login", "logout", "login-refused")
KINDS = LOOKS + SEARCHES + CHANGES + SIGN_INS


@dataclass(frozen=True)
class AuditEntry:
    who: str
    kind: str  # one of KINDS
    subject: str  # ids: "alert <id>", "sighting <id>", "person <id>", "stranger unknown-<n>", a photo's sha256
    results: int
    since_ts_ns: int | None = None
    min_similarity: float | None = None
    address: str | None = None
    at_ts_ns: int = field(default_factory=time.time_ns)
    audit_id: int | None = None  # set once written

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown kind of audit record {self.kind!r}: one of {', '.join(KINDS)}")


def record(engine: Engine, entry: AuditEntry) -> int:
    """Write ``entry``; return its id."""
    row = {k: v for k, v in asdict(entry).items() if k != "audit_id"}
    row["subject"] = row["subject"][:300]
    with engine.begin() as conn:
        return conn.execute(insert(audit).returning(audit.c.audit_id), row).scalar_one()


def entries(
    engine: Engine, limit: int = 100, before_id: int | None = None, who: str | None = None, kind: str | None = None
) -> list[AuditEntry]:
    """The latest ``limit`` entries (before ``before_id``, to page back; of ``who``, of ``kind``), newest first."""
    query = select(audit).order_by(audit.c.audit_id.desc()).limit(limit)
    if before_id is not None:
        query = query.where(audit.c.audit_id < before_id)
    if who:
        query = query.where(audit.c.who == who)
    if kind:
        query = query.where(audit.c.kind == kind)
    with engine.connect() as conn:
        return [AuditEntry(**row._asdict()) for row in conn.execute(query)]


def expire(engine: Engine, before_ts_ns: int) -> int:
    """Delete the records written before ``before_ts_ns`` (the audit's retention); return how many."""
    with engine.begin() as conn:
        return conn.execute(delete(audit).where(audit.c.at_ts_ns < before_ts_ns)).rowcount


FIELDS = ["audit_id", "at", "at_ts_ns", "who", "address", "kind", "subject", "since_ts_ns", "min_similarity", "results"]


def as_csv(log: list[AuditEntry]) -> str:
    """``log`` as CSV, one row per entry, times in ISO 8601 UTC beside the nanoseconds."""
    out = io.StringIO()
    writer = csv.DictWriter(out, FIELDS)
    writer.writeheader()
    for entry in log:
        at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(entry.at_ts_ns / 1e9))
        writer.writerow({**asdict(entry), "at": at})
    return out.getvalue()
