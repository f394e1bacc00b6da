"""Whether a local port is free, and if not, which process listens on it: a broker that cannot bind
its ports dies at start, and another broker on them would answer in its place."""

import errno
import os
import socket
from pathlib import Path


def taken(port: int, host: str = "127.0.0.1") -> bool:
    """Whether something listens on ``host:port`` (a bind that fails with EADDRINUSE)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a port in TIME_WAIT is free to Kafka too
        try:
            probe.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                return True
            raise
    return False


def holder(port: int) -> str:
    """Who listens on ``port``: "pid N (command line)" as far as /proc tells, else "another process"."""
    inodes = _listening_inodes(port)
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            links = {os.readlink(fd) for fd in (proc / "fd").iterdir()}
        except OSError:  # gone, or not ours to look at
            continue
        if any(f"socket:[{inode}]" in links for inode in inodes):
            try:
                command = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
            except OSError:
                command = "?"
            return f"pid {proc.name} ({_short(command)})"
    return "another process (not one this user can see)"


def _listening_inodes(port: int) -> set[str]:
    """The socket inodes in state LISTEN on ``port`` (IPv4 and IPv6), from /proc/net/tcp*."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "0A":  # 0A: LISTEN
                found.add(fields[9])
    return found


def _short(command: str, keep: int = 160) -> str:
    """A long command line (a JVM's class path) cut in the middle, its start and end kept."""
    return command if len(command) <= keep else f"{command[: keep // 2]} ... {command[-keep // 2 :]}"
