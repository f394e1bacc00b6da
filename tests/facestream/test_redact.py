"""Credentials in camera URLs are masked wherever a source is shown."""

import pytest
from click.testing import CliRunner

from facestream.redact import redact
from facestream.tools.cli import cli


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("rtsp://admin:pw@10.0.0.7:554/s1", "rtsp://***@10.0.0.7:554/s1"),
        ("rtsp://token@cam/s1", "rtsp://***@cam/s1"),
        ("cannot open 'rtsp://a:b@x/y' and http://u:p@h/z", "cannot open 'rtsp://***@x/y' and http://***@h/z"),
        ("http://cam/snap.cgi?user=admin&password=pw&chn=1", "http://cam/snap.cgi?user=***&password=***&chn=1"),
        ("rtsp://10.0.0.7/s1?token=abc", "rtsp://10.0.0.7/s1?token=***"),
        ("rtsp://10.0.0.7/stream1", "rtsp://10.0.0.7/stream1"),
        ("/videos/door@night.mp4", "/videos/door@night.mp4"),
    ],
)
def test_credentials_are_masked_and_nothing_else(text: str, shown: str) -> None:
    assert redact(text) == shown


def test_config_show_masks_camera_credentials(tmp_path) -> None:
    config = tmp_path / "facestream.toml"
    config.write_text('[produce]\nsources = ["rtsp://viewer:hunter2@10.0.0.7/s1"]\ncameras = ["door"]\nfps = 5\n')
    result = CliRunner().invoke(cli, ["--config", str(config), "config", "show"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "hunter2" not in result.output and "rtsp://***@10.0.0.7/s1" in result.output and "fps = 5" in result.output


def test_config_show_masks_tokens_in_notification_urls(tmp_path) -> None:
    # Apprise URLs carry tokens in their paths (Telegram's bot token, Slack's three), not only as user:password.
    config = tmp_path / "facestream.toml"
    config.write_text('[notify.targets.chat]\nurl = "tgram://123456:AAH-bot-token/-1001234"\nkinds = "stranger"\n')
    result = CliRunner().invoke(cli, ["--config", str(config), "config", "show"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "AAH-bot-token" not in result.output and "tgram://***" in result.output and "stranger" in result.output
