from detector_service.cli import detect
from facestream.cli import main

main(detect, env_prefix="FACESTREAM_DETECT")
