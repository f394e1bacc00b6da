"""A producer as the child process a deployment runs, and what its /metrics say (see ``pythonpath``
in pyproject)."""

import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from facestream.producers.config import producer_command
from helpers.http import scrape


def start_producer(cameras: list[tuple[str, str]], log: Path, **changes) -> subprocess.Popen:
    with open(log, "wb") as out:
        return subprocess.Popen(producer_command(cameras, **changes), stdout=out, stderr=subprocess.STDOUT)


def stop_producer(producer: subprocess.Popen, log: Path) -> str:
    """Ctrl-C, as a person stops it; it must flush and exit cleanly."""
    producer.send_signal(signal.SIGINT)
    producer.wait(timeout=60)
    output = log.read_text(errors="replace")
    assert producer.returncode == 0, output[-3000:]
    return output


def sent(port: int, camera: str) -> float:
    """The camera's frames sent, from the producer's /metrics (0 until it serves them)."""
    line = f'facestream_producer_frames_sent_total{{camera="{camera}"}} '
    try:
        metrics = scrape(port)
    except OSError:
        return 0.0
    return next((float(x.split()[-1]) for x in metrics.splitlines() if x.startswith(line)), 0.0)


def wait_until(check, timeout_s: float, what: str, detail: Callable[[], str] | None = None) -> float:
    """Poll ``check()`` until true; return when (time.time()). On a timeout the failure says ``detail()``
    too: what the waited-on parts said, read only then."""
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out waiting for {what}" + (f"\n{detail()}" if detail else ""))
        time.sleep(0.2)
    return time.time()
