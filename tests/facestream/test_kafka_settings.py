"""Kafka client settings for every client: from a properties file, the config file's [kafka] table and
--kafka, later ones winning; never for what facestream sets itself; secrets shown masked; a name
librdkafka does not know is an error at the first client."""

import json
import os

import pytest
from click.testing import CliRunner

from facestream import kafka_clients, kafka_settings
from facestream.errors import ConfigError
from facestream.tools.cli import cli


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch) -> None:
    """Empty for the test (empty means unset), and as before it afterwards: the hub writes them."""
    for name in (kafka_settings.ENV_FILE, kafka_settings.ENV_MERGED):
        monkeypatch.setenv(name, "")


def test_sources_merge_later_ones_winning(tmp_path, monkeypatch) -> None:
    props = tmp_path / "client.properties"
    props.write_text("# a comment\n! another\nsecurity.protocol = SSL\nssl.ca.location: /etc/ca.pem\nsasl.username=a\n")
    monkeypatch.setenv(kafka_settings.ENV_FILE, str(props))
    kafka_settings.add({"sasl.username": "b"}, "test")
    assert kafka_settings.load() == {"security.protocol": "SSL", "ssl.ca.location": "/etc/ca.pem", "sasl.username": "b"}


def test_a_malformed_properties_line_names_file_and_line(tmp_path, monkeypatch) -> None:
    props = tmp_path / "client.properties"
    props.write_text("security.protocol=SSL\njust words\n")
    monkeypatch.setenv(kafka_settings.ENV_FILE, str(props))
    with pytest.raises(ConfigError, match="client.properties:2"):
        kafka_settings.load()


@pytest.mark.parametrize("key", ["bootstrap.servers", "group.id", "client.id"])
def test_what_facestream_sets_itself_is_refused(key: str) -> None:
    with pytest.raises(ConfigError, match=key):
        kafka_settings.add({key: "x"}, "--kafka")


def test_secrets_are_masked() -> None:
    shown = kafka_settings.masked({"sasl.password": "p", "ssl.key.password": "k", "sasl.username": "alice"})
    assert shown == {"sasl.password": "********", "ssl.key.password": "********", "sasl.username": "alice"}


def test_an_unknown_librdkafka_property_is_an_error_not_ignored() -> None:
    kafka_settings.add({"sasl.usernme": "alice"}, "--kafka")  # misspelt
    with pytest.raises(ConfigError, match="sasl.usernme"):
        kafka_clients.producer("test")


def test_the_hub_takes_flags_and_a_kafka_table_and_shows_them_masked(tmp_path) -> None:
    config = tmp_path / "facestream.toml"
    config.write_text('[kafka]\n"security.protocol" = "SASL_SSL"\n"sasl.password" = "hunter2"\n[detect]\nbatch = 4\n')
    result = CliRunner().invoke(
        cli, ["--config", str(config), "--kafka", "sasl.username=alice", "config", "show"], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    assert "security.protocol = SASL_SSL" in result.output and "sasl.username = alice" in result.output
    assert "sasl.password = ********" in result.output and "hunter2" not in result.output
    assert "[detect]" in result.output and "batch = 4" in result.output
    assert json.loads(os.environ[kafka_settings.ENV_MERGED])["sasl.username"] == "alice"


def test_a_bad_kafka_flag_says_what_it_wants() -> None:
    result = CliRunner().invoke(cli, ["--kafka", "security.protocol", "config", "show"])
    assert result.exit_code != 0 and "KEY=VALUE" in result.output


def test_an_unknown_environment_variable_of_the_command_is_an_error(monkeypatch) -> None:
    # A user "enabling" SASL through a variable no option reads got plaintext, silently.
    monkeypatch.setenv("FACESTREAM_DETECT_SASL_MECHANISM", "SCRAM-SHA-512")
    result = CliRunner().invoke(cli, ["detect", "--help"])
    assert result.exit_code != 0
    assert "FACESTREAM_DETECT_SASL_MECHANISM" in str(result.exception)
