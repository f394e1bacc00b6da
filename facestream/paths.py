"""Where facestream keeps its state: one folder, ``$FACESTREAM_HOME`` (default ``~/.facestream``).

Kafka's jars and data, fetched models and sample photos all live below it, so removing the
folder resets everything and a CI job can point it at a scratch directory.
"""

import os
from pathlib import Path


def home() -> Path:
    return Path(os.environ.get("FACESTREAM_HOME", "~/.facestream")).expanduser()


def kafka_dir() -> Path:
    return home() / "kafka"


def models_dir() -> Path:
    return home() / "models"


def samples_dir() -> Path:
    return home() / "samples"
