from facestream.command import run
from facestream.producers.cli import produce

run(produce, env_prefix="FACESTREAM_PRODUCE")
