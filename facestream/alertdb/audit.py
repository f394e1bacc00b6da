"""The audit log of search by face: who searched (or erased), when, for what, and how much was found;
and of the recurring strangers: whose journey was shown, who named or split one.

A search over people's movements is something an operator must be able to account for, so every one
is written down before its results are shown, and the log is kept with the sightings (one database,
one backup). The page shows it and exports it as CSV.
"""

import csv
import io
import time
from dataclasses import asdict, dataclass, field

from sqlalchemy import Engine, insert, select

from facestream.alertdb.schema import search_audit

KINDS = ("photo", "alert", "person", "forget", "journey", "name", "split")


@dataclass(frozen=True)
class AuditEntry:
    who: str
    kind: str  # one of KINDS
    subject: str  # a photo's sha256, "alert <id> face <n>", "person <id>", "stranger unknown-<n>"
    results: int
    since_ts_ns: int | None = None
    min_similarity: float | None = None
    at_ts_ns: int = field(default_factory=time.time_ns)
    audit_id: int | None = None  # set once written

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown kind of search {self.kind!r}: one of {', '.join(KINDS)}")


def record(engine: Engine, entry: AuditEntry) -> int:
    """Write ``entry``; return its id."""
    row = {k: v for k, v in asdict(entry).items() if k != "audit_id"}
    with engine.begin() as conn:
        return conn.execute(insert(search_audit).returning(search_audit.c.audit_id), row).scalar_one()


def entries(engine: Engine, limit: int = 100, before_id: int | None = None) -> list[AuditEntry]:
    """The latest ``limit`` entries (before ``before_id``, to page back), newest first."""
    query = select(search_audit).order_by(search_audit.c.audit_id.desc()).limit(limit)
    if before_id is not None:
        query = query.where(search_audit.c.audit_id < before_id)
    with engine.connect() as conn:
        return [AuditEntry(**row._asdict()) for row in conn.execute(query)]


def as_csv(log: list[AuditEntry]) -> str:
    """``log`` as CSV, one row per entry, times in ISO 8601 UTC beside the nanoseconds."""
    out = io.StringIO()
    fields = ["audit_id", "at", "at_ts_ns", "who", "kind", "subject", "since_ts_ns", "min_similarity", "results"]
    writer = csv.DictWriter(out, fields)
    writer.writeheader()
    for entry in log:
        at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(entry.at_ts_ns / 1e9))
        writer.writerow({**asdict(entry), "at": at})
    return out.getvalue()
