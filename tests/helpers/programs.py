"""The programs a test may start only when it says so: each real server (or its client) and the marker
that declares it. `make test-fast` leaves those markers out and promises a machine without any of these
programs; a test of that tier that starts one would pass where they are installed and fail on a fresh
machine, so ``Guard`` refuses the start at once, naming the marker the test lacks."""

import os
import sys
from collections.abc import Sequence

# A program's name (an executable's file name, a Python module run with -m, a script's file name) ->
# the marker of the tests that may start it.
DECLARED_BY = {
    "podman": "compose",
    "podman_compose": "compose",
    "podman-compose": "compose",
    "runc": "compose",
    "debootstrap": "compose",
    "chromium": "browser",
    "chromedriver": "browser",
    "postgres": "postgres",
    "pg_ctl": "postgres",
    "initdb": "postgres",
    "rtsp_camera.py": "rtsp",
    "gst-launch-1.0": "rtsp",
    "java": "kafka",
    "mosquitto": "e2e",
    "nginx": "e2e",
    "helm": "helm",
    "promtool": "prometheus",
    "prometheus": "prometheus",
    "nsenter": "compose",  # into a container's network namespace (helpers/network.py)
}
# `facestream COMMAND` run in a process of its own: the commands that need a broker.
BROKER_COMMANDS = {"kafka", "demo", "produce", "detect", "pose", "alerting", "alert-store", "notify", "dashboard"}
BROKER_COMMANDS |= {"events", "alerts", "topics"}


def declared_by(args: Sequence[str]) -> tuple[str, str | None]:
    """The program ``args`` starts, and the marker a test starting it must carry (None: anyone may)."""
    words = [os.path.basename(str(a)) for a in args]
    program = words[0]
    if program.startswith("python") or str(args[0]) == sys.executable:
        rest = [w for w in words[1:] if not w.startswith("-") or w == "-m"]
        if rest[:1] == ["-m"] and len(rest) > 1:
            program, rest = rest[1], rest[2:]
        elif rest:
            program, rest = rest[0], rest[1:]
        if program in ("facestream", "facestream.tools.cli") and rest[:1] and rest[0] in BROKER_COMMANDS:
            return f"facestream {rest[0]}", "kafka"
    if program == "facestream" and len(words) > 1 and words[1] in BROKER_COMMANDS:
        return f"facestream {words[1]}", "kafka"
    return program, DECLARED_BY.get(program)


class Guard:
    """An audit hook (PEP 578) that refuses, with a clear error, each program started by the test at
        hand that its markers do not declare. Only the tests that declare no real part (none of ``markers``:
    the fast tier, and its slow tests) are held."""

    def __init__(self, markers: set[str]) -> None:
        self.markers = markers
        self.test: tuple[str, set[str]] | None = None  # the test running now: its id and markers

    def enter(self, nodeid: str, marks: set[str]) -> None:
        self.test = (nodeid, marks) if not marks & self.markers else None

    def leave(self) -> None:
        self.test = None

    def __call__(self, event: str, args: tuple) -> None:
        if event != "subprocess.Popen" or self.test is None:
            return
        executable, command = args[0], args[1]
        if isinstance(command, str | bytes | os.PathLike):  # a shell line or a lone program
            command = os.fsdecode(command).split()
        command = list(command) or [os.fsdecode(executable)]
        program, needed = declared_by([str(a) for a in command])
        if needed is not None:
            nodeid, _ = self.test
            raise RuntimeError(
                f"{nodeid} starts {program!r} ({' '.join(map(str, command))[:200]}) "
                f"but is not marked {needed!r}: `make test-fast` runs it on machines without that program. "
                f"Mark the test (tests/conftest.py sets markers from fixtures and helpers)."
            )
