from facestream.alerting.cli import alerting
from facestream.command import run

run(alerting, env_prefix="FACESTREAM_ALERTING")
