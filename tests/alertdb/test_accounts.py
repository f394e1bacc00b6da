"""The dashboard's accounts on SQLite and on a real PostgreSQL server: argon2id hashes, one name each,
API tokens and sessions kept only as digests, and every session ended when an account changes."""

import pytest
from sqlalchemy import select

from facestream.alertdb import accounts, open_database
from facestream.alertdb.schema import sessions, users
from facestream.errors import ConfigError

PASSWORD = "correct-horse-battery"


@pytest.fixture
def engine(database_url: str):
    return open_database(database_url)


def test_an_account_is_made_once_with_a_hash_and_refuses_bad_names(engine) -> None:
    accounts.add(engine, "ana", "admin", PASSWORD)
    with engine.connect() as conn:
        stored = conn.execute(select(users.c.password_hash)).scalar_one()
    assert stored.startswith("$argon2id$") and PASSWORD not in stored
    with pytest.raises(ConfigError, match="already a user 'ana'"):
        accounts.add(engine, "ana", "viewer", PASSWORD)
    for name in ("", "x<b>", "a b", "'; DROP TABLE users; --", "a" * 65):
        with pytest.raises(ConfigError, match="a user name is"):
            accounts.add(engine, name, "viewer", PASSWORD)
    with pytest.raises(ConfigError, match="at least 10 characters"):
        accounts.add(engine, "bo", "viewer", "short")
    with pytest.raises(ConfigError, match="unknown role 'root'"):
        accounts.add(engine, "bo", "root", PASSWORD)


def test_passwords_tokens_and_roles(engine) -> None:
    accounts.add(engine, "bo", "reviewer", PASSWORD)
    assert accounts.by_password(engine, "bo", PASSWORD) == accounts.User("bo", "reviewer")
    assert accounts.by_password(engine, "bo", "wrong-password") is None
    assert accounts.by_password(engine, "nobody", PASSWORD) is None
    token = accounts.new_token(engine, "bo")
    assert accounts.by_token(engine, token).name == "bo" and accounts.by_token(engine, token + "x") is None
    again = accounts.new_token(engine, "bo")
    assert accounts.by_token(engine, token) is None and accounts.by_token(engine, again) is not None  # replaced
    user = accounts.named(engine, "bo")
    assert user.may("viewer") and user.may("reviewer") and not user.may("identity")
    accounts.change(engine, "bo", disabled=True)
    assert accounts.by_password(engine, "bo", PASSWORD) is None and accounts.by_token(engine, again) is None


def test_sessions_end_at_logout_when_idle_and_when_the_account_changes(engine) -> None:
    user = accounts.add(engine, "cy", "identity", PASSWORD)
    cookie, csrf = accounts.start_session(engine, user, "10.0.0.1")
    with engine.connect() as conn:
        assert conn.execute(select(sessions.c.session_sha256)).scalar_one() != cookie  # only its digest
    found = accounts.session(engine, cookie)
    assert found is not None and found.user.name == "cy" and found.csrf == csrf
    later = found.started_ts_ns + (accounts.IDLE_S + 1) * 10**9
    assert accounts.session(engine, cookie, now_ns=later) is None  # idle too long: ended
    assert accounts.session(engine, cookie) is None
    cookie, _ = accounts.start_session(engine, user, None)
    accounts.change(engine, "cy", role="viewer")
    assert accounts.session(engine, cookie) is None  # a changed right does not wait
    cookie, _ = accounts.start_session(engine, user, None)
    assert accounts.end_session(engine, cookie) and accounts.session(engine, cookie) is None
