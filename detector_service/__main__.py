from facestream.command import run
from facestream.detector_service.cli import detect

run(detect, env_prefix="FACESTREAM_DETECT")
