"""A real PostgreSQL server for the tests and the alert store's benchmark (Debian's ``postgresql``
package): a cluster of its own in a temporary folder on a free port, run as the ``postgres`` user when
run as root (PostgreSQL refuses root), stopped at the end."""

import os
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

from bench import free_port

ROOT = Path("/usr/lib/postgresql")


def _bin() -> Path:
    versions = sorted(ROOT.glob("*/bin/pg_ctl"), key=lambda p: int(p.parts[-3]))
    assert versions, "PostgreSQL is needed: apt-get install postgresql (.ci/run does)"
    return versions[-1].parent


class PostgresServer:
    def __init__(self) -> None:
        self.bin, self.port = _bin(), free_port()
        self.root = Path(tempfile.mkdtemp(prefix="facestream-pg-"))
        self.data = self.root / "data"
        self.as_root = os.geteuid() == 0

    def _run(self, tool: str, *args: str) -> None:
        command = [str(self.bin / tool), *args]
        if self.as_root:
            command = ["runuser", "-u", "postgres", "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, f"{tool} failed: {done.stdout}{done.stderr}"

    def start(self) -> "PostgresServer":
        self.root.chmod(0o755)
        if self.as_root:
            shutil.chown(self.root, "postgres")
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "facestream", "--no-sync")
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.root / "server.log"), "-w", "start")
        return self

    def database(self) -> str:
        """A fresh database's URL, as users write it."""
        name = f"t_{uuid.uuid4().hex[:10]}"
        self._run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "facestream", name)
        return f"postgresql://facestream@127.0.0.1:{self.port}/{name}"

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")
        shutil.rmtree(self.root, ignore_errors=True)
