from facestream.cli import main
from producers.cli import produce

main(produce, env_prefix="FACESTREAM_PRODUCE")
