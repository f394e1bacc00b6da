"""``facestream users`` on a SQLite database: each subcommand changes the account as it says, is
audited as the system user's, and refuses what is malformed with a sentence."""

from pathlib import Path

from click.testing import CliRunner

from facestream.alertdb import accounts, audit, open_database
from facestream.errors import ConfigError
from facestream.tools.cli import cli


def test_the_users_command_makes_changes_and_audits_them(tmp_path: Path) -> None:
    database = f"sqlite:///{tmp_path / 'alerts.db'}"

    def users(*args: str, given: str = "") -> str:
        said = CliRunner().invoke(cli, ["users", *args, "--database", database], input=given)
        assert said.exit_code == 0, said.output
        return said.output

    assert "password: " in users("add", "ana", "--role", "admin", "--generate")
    users("add", "bo", "--role", "viewer", "--password-stdin", given="a-long-password\n")
    assert "bo exists: left as it is" in users("add", "bo", "--role", "admin", "--if-missing", "--generate")
    users("role", "bo", "reviewer")
    users("disable", "bo")
    engine = open_database(database)
    assert accounts.named(engine, "bo") == accounts.User("bo", "reviewer", disabled=True)
    users("enable", "bo")
    users("reset", "bo", "--password-stdin", given="another-long-password\n")
    assert accounts.by_password(engine, "bo", "another-long-password") is not None
    token = users("token", "bo").strip()
    assert accounts.by_token(engine, token).name == "bo"
    assert users("list").splitlines() == [f"{'ana':<24} {'admin':<9}".rstrip(), f"{'bo':<24} {'reviewer':<9} api-token"]
    said = [entry.subject for entry in reversed(audit.entries(engine))]
    assert said == [
        "add ana as admin",
        "add bo as viewer",
        "role of bo: reviewer",
        "disable bo",
        "enable bo",
        "reset password of bo",
        "new API token of bo",
    ]
    refused = CliRunner().invoke(
        cli, ["users", "add", "x<b>", "--role", "viewer", "--generate", "--database", database]
    )
    assert isinstance(refused.exception, ConfigError) and "a user name is" in str(
        refused.exception
    )  # the hub prints it as error:
