"""``facestream users``: the dashboard's accounts, kept in the alert store's database."""

import getpass
import os
import sys

import click

from facestream.alertdb import accounts, audit, default_url, open_database
from facestream.errors import ConfigError

DATABASE_HELP = "The alert store's database (its --database; default $FACESTREAM_HOME/alerts.db)."


def _database(url: str):
    return open_database(url or default_url())


def _password(from_stdin: bool, generate: bool, env: str = "") -> tuple[str, bool]:
    """The password given on stdin, in the variable ``env`` or at a prompt, or a new one (and whether
    it was made here)."""
    if from_stdin:
        return sys.stdin.readline().rstrip("\n"), False
    if env and os.environ.get(env):
        return os.environ[env], False
    if generate or not sys.stdin.isatty():
        return accounts.new_password(), True
    first = getpass.getpass("password: ")
    if getpass.getpass("again: ") != first:
        raise ConfigError("the two passwords differ")
    return first, False


def _audit(engine, subject: str) -> None:
    """A change made here is written to the audit log as the system user's."""
    audit.record(engine, audit.AuditEntry(f"cli:{getpass.getuser()}", "user", subject, 1))


def _change(database: str, name: str, said: str, **values) -> None:
    """Change an account (``accounts.change``: its sessions end) and audit it as ``said``."""
    engine = _database(database)
    accounts.change(engine, name, **values)
    _audit(engine, said)


database_option = click.option("--database", default="", envvar="FACESTREAM_USERS_DATABASE", help=DATABASE_HELP)
password_options = [
    click.option("--password-stdin", is_flag=True, help="Read the password from the first line of stdin."),
    click.option("--password-env", default="", metavar="VAR", help="Read it from this environment variable (if set)."),
    click.option(
        "--generate", is_flag=True, help="Make a random password and print it once (also without a terminal)."
    ),
]


def _with_password(command):
    for option in reversed(password_options):
        command = option(command)
    return command


@click.group(
    epilog="""\b
Examples:
  facestream users add ana --role admin                  # asks for a password
  facestream users add gate-desk --role viewer --generate
  echo "$PASSWORD" | facestream users reset ana --password-stdin
  facestream users add admin --role admin --if-missing --password-env ADMIN_PASSWORD   # compose
  facestream users role bo identity
  facestream users disable bo                            # signs bo out everywhere
  facestream users token ci-scripts                      # an API token: Authorization: Bearer ...
  facestream users list
\b
Roles, each with the rights of those before it: viewer (live tiles, alerts), reviewer (review and
comment), identity (gallery, teach, search by face, journeys, forget), admin (users, audit, retention).
""",
)
def users() -> None:
    """Accounts of the dashboard: who may sign in, and with which role (docs/dashboard.md)."""


@users.command()
@click.argument("name")
@click.option("--role", required=True, type=click.Choice(accounts.ROLES))
@click.option("--if-missing", is_flag=True, help="Leave an existing account as it is (a deployment's first start).")
@_with_password
@database_option
def add(
    name: str, role: str, if_missing: bool, password_stdin: bool, password_env: str, generate: bool, database: str
) -> None:
    """Create an account."""
    engine = _database(database)
    if if_missing and accounts.named(engine, name) is not None:
        click.echo(f"{name} exists: left as it is")
        return
    password, made = _password(password_stdin, generate, password_env)
    accounts.add(engine, name, role, password)
    _audit(engine, f"add {name} as {role}")
    click.echo(f"added {name} ({role})" + (f"; password: {password}" if made else ""))


@users.command()
@click.argument("name")
@click.argument("role", type=click.Choice(accounts.ROLES))
@database_option
def role(name: str, role: str, database: str) -> None:
    """Give an account another role (its sessions end)."""
    _change(database, name, f"role of {name}: {role}", role=role)
    click.echo(f"{name} is now {role}")


@users.command()
@click.argument("name")
@database_option
def disable(name: str, database: str) -> None:
    """Stop an account from signing in (its sessions and API token stop at once)."""
    _change(database, name, f"disable {name}", disabled=True)
    click.echo(f"{name} is disabled")


@users.command()
@click.argument("name")
@database_option
def enable(name: str, database: str) -> None:
    """Let a disabled account sign in again."""
    _change(database, name, f"enable {name}", disabled=False)
    click.echo(f"{name} is enabled")


@users.command()
@click.argument("name")
@_with_password
@database_option
def reset(name: str, password_stdin: bool, password_env: str, generate: bool, database: str) -> None:
    """Set a new password (its sessions end)."""
    password, made = _password(password_stdin, generate, password_env)
    _change(database, name, f"reset password of {name}", password=password)
    click.echo(f"new password for {name}" + (f": {password}" if made else " set"))


@users.command()
@click.argument("name")
@database_option
def token(name: str, database: str) -> None:
    """Make a new API token for scripts (the old one stops working); printed once."""
    engine = _database(database)
    made = accounts.new_token(engine, name)
    _audit(engine, f"new API token of {name}")
    click.echo(made)


@users.command(name="list")
@database_option
def listing(database: str) -> None:
    """The accounts, one a line: name, role, and whether disabled or holding an API token."""
    for user in accounts.listed(_database(database)):
        flags = [flag for flag, on in (("disabled", user.disabled), ("api-token", user.has_token)) if on]
        click.echo(f"{user.name:<24} {user.role:<9} {' '.join(flags)}".rstrip())
