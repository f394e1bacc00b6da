"""Benchmarks (never tests): each writes a JSON result under bench/results/ and prints a table."""

import json
import socket
import subprocess
from dataclasses import fields
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def save(result: dict, out: Path) -> None:
    """Write ``result`` as the JSON file ``out``. Long benchmarks call it after each measurement with
    ``complete`` false, so a run stopped at a time limit still leaves what it measured (the docs'
    generator, report.py, refuses such a file)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")


def settings_of(cfg) -> dict:
    """A benchmark config (a dataclass) as the JSON-ready ``settings`` of its result file."""
    values = {f.name: getattr(cfg, f.name) for f in fields(cfg)}
    return {k: (str(v) if isinstance(v, Path) else v) for k, v in values.items()}


def free_port() -> int:
    """A TCP port nothing listens on now, for a server a benchmark starts."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def spawn(log: Path, cmd: list[str]) -> subprocess.Popen:
    """Run a service's command in the background, its output (stdout and stderr) into ``log``."""
    with open(log, "wb") as out:
        return subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
