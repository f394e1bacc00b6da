from facestream.alert_store.cli import alert_store
from facestream.command import run

run(alert_store, env_prefix="FACESTREAM_ALERT_STORE")
