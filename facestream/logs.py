"""One log format for every service, written to stderr so stdout stays for data (events, tables)."""

import logging
import os


def setup(verbose: bool = False) -> None:
    level = logging.DEBUG if verbose else os.environ.get("FACESTREAM_LOG_LEVEL", "INFO").upper()
    logging.basicConfig(
        level=level,
        format="%(asctime)s %(levelname)-7s %(name)s: %(message)s",
        datefmt="%H:%M:%S",
    )


def worth_saying(count: int, every: int = 100) -> bool:
    """For a trouble that may repeat at frame rate (a camera's refused frames, skipped frames): say its
    first occurrence and every ``every``-th, so the log stays readable and the count stays visible."""
    return count == 1 or count % every == 0
