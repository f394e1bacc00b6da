"""The dashboard's accounts: a name, a role, an argon2id password hash, an optional API token for
scripts, and the sessions signed in with them; all in the alert store's database, beside what they guard.

A session's cookie and an API token are random (256 bits) and only their SHA-256 is kept: a copy of
the table opens nothing. A session ends at logout, after ``IDLE_S`` unused or ``LIFETIME_S`` in all,
and every session of a user ends when their password, role or access changes.
"""

import hashlib
import re
import secrets
import time
from dataclasses import dataclass

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError
from sqlalchemy import Engine, delete, insert, or_, select, update

from facestream.alertdb.schema import sessions, users
from facestream.errors import ConfigError

ROLES = ("viewer", "reviewer", "identity", "admin")  # each has the rights of those before it
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}")
PASSWORD_MIN = 10
IDLE_S = 12 * 3600
LIFETIME_S = 7 * 24 * 3600
SEEN_EVERY_S = 60  # a session's last use is written at most this often
_hasher = PasswordHasher()  # argon2id with RFC 9106's low-memory parameters (64 MiB, 3 passes)
_NOBODY = _hasher.hash(secrets.token_hex(16))  # checked against for unknown names: no timing tells who exists


@dataclass(frozen=True)
class User:
    name: str
    role: str
    disabled: bool = False
    has_token: bool = False

    def may(self, role: str) -> bool:
        """Whether this user holds ``role`` (or one above it)."""
        return ROLES.index(self.role) >= ROLES.index(role)


@dataclass(frozen=True)
class Session:
    user: User
    csrf: str
    started_ts_ns: int


def check_name(name: str) -> str:
    if not NAME.fullmatch(name):
        raise ConfigError(
            f"a user name is 1-64 letters, digits and . _ @ - (starting with a letter or digit), got {name!r}"
        )
    return name


def check_role(role: str) -> str:
    if role not in ROLES:
        raise ConfigError(f"unknown role {role!r}: one of {', '.join(ROLES)}")
    return role


def check_password(password: str) -> str:
    if len(password) < PASSWORD_MIN:
        raise ConfigError(f"a password has at least {PASSWORD_MIN} characters")
    return password


def new_password() -> str:
    """A password to hand over once (about 96 bits)."""
    return secrets.token_urlsafe(12)


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def _user(row) -> User:
    return User(row.name, row.role, row.disabled, row.token_sha256 is not None)


def add(engine: Engine, name: str, role: str, password: str) -> User:
    """Create an account; ConfigError if the name is taken or anything is malformed."""
    check_name(name), check_role(role), check_password(password)
    now = time.time_ns()
    with engine.begin() as conn:
        if conn.execute(select(users.c.name).where(users.c.name == name)).first():
            raise ConfigError(f"there is already a user {name!r}")
        conn.execute(
            insert(users),
            {
                "name": name,
                "role": role,
                "password_hash": _hasher.hash(password),
                "disabled": False,
                "created_ts_ns": now,
                "changed_ts_ns": now,
            },
        )
    return User(name, role)


def listed(engine: Engine) -> list[User]:
    with engine.connect() as conn:
        return [_user(row) for row in conn.execute(select(users).order_by(users.c.name))]


def named(engine: Engine, name: str) -> User | None:
    with engine.connect() as conn:
        row = conn.execute(select(users).where(users.c.name == name)).first()
    return None if row is None else _user(row)


def change(engine: Engine, name: str, **values) -> User:
    """Change ``role``, ``disabled`` or ``password`` of an account and end its sessions (a changed
    right must not wait for a session to expire); ConfigError for an unknown user."""
    if "role" in values:
        check_role(values["role"])
    if "password" in values:
        values["password_hash"] = _hasher.hash(check_password(values.pop("password")))
    with engine.begin() as conn:
        done = conn.execute(update(users).where(users.c.name == name).values(**values, changed_ts_ns=time.time_ns()))
        if not done.rowcount:
            raise ConfigError(f"no user {name!r}")
        conn.execute(delete(sessions).where(sessions.c.name == name))
    user = named(engine, name)
    assert user is not None
    return user


def new_token(engine: Engine, name: str) -> str:
    """A new API token for ``name`` (the old one stops working); shown once, only its digest kept."""
    token = "fst_" + secrets.token_urlsafe(32)
    with engine.begin() as conn:
        values = {"token_sha256": _digest(token), "changed_ts_ns": time.time_ns()}
        if not conn.execute(update(users).where(users.c.name == name).values(**values)).rowcount:
            raise ConfigError(f"no user {name!r}")
    return token


def by_password(engine: Engine, name: str, password: str) -> User | None:
    """The enabled user with this name and password, else None (as slow for an unknown name)."""
    with engine.connect() as conn:
        row = conn.execute(select(users).where(users.c.name == name)).first()
    try:
        _hasher.verify(row.password_hash if row else _NOBODY, password)
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return None
    if row is None or row.disabled:
        return None
    if _hasher.check_needs_rehash(row.password_hash):
        with engine.begin() as conn:
            conn.execute(update(users).where(users.c.name == name).values(password_hash=_hasher.hash(password)))
    return _user(row)


def by_token(engine: Engine, token: str) -> User | None:
    """The enabled user whose API token this is."""
    with engine.connect() as conn:
        row = conn.execute(select(users).where(users.c.token_sha256 == _digest(token))).first()
    return None if row is None or row.disabled else _user(row)


def start_session(engine: Engine, user: User, address: str | None) -> tuple[str, str]:
    """A new session of ``user``: (the cookie's value, its CSRF token); expired sessions of anyone are
    deleted on the way (a cookie nobody brings back would otherwise stay)."""
    cookie, csrf, now = secrets.token_urlsafe(32), secrets.token_urlsafe(32), time.time_ns()
    row = {"session_sha256": _digest(cookie), "name": user.name, "csrf": csrf, "address": address}
    expired = or_(sessions.c.seen_ts_ns < now - IDLE_S * 10**9, sessions.c.started_ts_ns < now - LIFETIME_S * 10**9)
    with engine.begin() as conn:
        conn.execute(delete(sessions).where(expired))
        conn.execute(insert(sessions), {**row, "started_ts_ns": now, "seen_ts_ns": now})
    return cookie, csrf


def session(engine: Engine, cookie: str, now_ns: int | None = None) -> Session | None:
    """The live session of this cookie and its enabled user; an expired one is ended here."""
    now = now_ns or time.time_ns()
    key = _digest(cookie)
    with engine.connect() as conn:
        row = conn.execute(
            select(sessions, users).join(users, users.c.name == sessions.c.name).where(sessions.c.session_sha256 == key)
        ).first()
    if row is None:
        return None
    if row.disabled or now - row.seen_ts_ns > IDLE_S * 10**9 or now - row.started_ts_ns > LIFETIME_S * 10**9:
        end_session(engine, cookie)
        return None
    if now - row.seen_ts_ns > SEEN_EVERY_S * 10**9:
        with engine.begin() as conn:
            conn.execute(update(sessions).where(sessions.c.session_sha256 == key).values(seen_ts_ns=now))
    return Session(_user(row), row.csrf, row.started_ts_ns)


def end_session(engine: Engine, cookie: str) -> bool:
    with engine.begin() as conn:
        return bool(conn.execute(delete(sessions).where(sessions.c.session_sha256 == _digest(cookie))).rowcount)


def any_admin(engine: Engine) -> bool:
    with engine.connect() as conn:
        query = select(users.c.name).where(users.c.role == "admin", users.c.disabled.is_(False)).limit(1)
        return conn.execute(query).first() is not None
