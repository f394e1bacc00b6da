from facestream.command import run
from facestream.notifier.cli import notify

run(notify, env_prefix="FACESTREAM_NOTIFY")
