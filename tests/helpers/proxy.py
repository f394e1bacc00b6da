"""A real reverse proxy in front of the dashboard: Debian's nginx, signing users in with HTTP basic
authentication and naming them to the dashboard in ``Remote-User``, as an identity-aware proxy does
(see ``pythonpath`` in pyproject)."""

import os
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

NGINX = "/usr/sbin/nginx"
PROXY_ADDRESS = "127.0.0.2"  # nginx reaches the dashboard from here: the one address the dashboard trusts


@contextmanager
def basic_auth_proxy(folder: Path, port: int, upstream: int, users: dict[str, str]) -> Iterator[None]:
    """nginx on ``port`` asking for one of ``users`` (name -> password), then passing the request to the
    dashboard on ``upstream`` from ``PROXY_ADDRESS`` with the user in Remote-User. Run as root (CI), its
    workers stay root: the test's own folder is not readable by nginx's usual unprivileged user."""
    assert Path(NGINX).exists(), "nginx missing: apt-get install nginx (tests/system-packages.sh does)"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "htpasswd").write_text("".join(f"{name}:{{PLAIN}}{password}\n" for name, password in users.items()))
    temp = {kind: folder / kind for kind in ("client", "proxy", "fastcgi", "uwsgi", "scgi")}
    for path in temp.values():
        path.mkdir(exist_ok=True)
    (folder / "nginx.conf").write_text(
        f"""
daemon off;
{"user root;" if os.geteuid() == 0 else ""}
pid {folder / "nginx.pid"};
error_log {folder / "error.log"} info;
events {{ worker_connections 64; }}
http {{
  access_log {folder / "access.log"};
  client_body_temp_path {temp["client"]};
  proxy_temp_path {temp["proxy"]};
  fastcgi_temp_path {temp["fastcgi"]};
  uwsgi_temp_path {temp["uwsgi"]};
  scgi_temp_path {temp["scgi"]};
  server {{
    listen 127.0.0.1:{port};
    auth_basic "facestream";
    auth_basic_user_file {folder / "htpasswd"};
    location / {{
      proxy_pass http://127.0.0.1:{upstream};
      proxy_bind {PROXY_ADDRESS};
      proxy_set_header Host $http_host;
      proxy_set_header Remote-User $remote_user;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
    }}
  }}
}}
"""
    )
    with open(folder / "stderr.log", "wb") as stderr:
        proc = subprocess.Popen(
            [NGINX, "-p", str(folder), "-c", str(folder / "nginx.conf")], stdout=subprocess.DEVNULL, stderr=stderr
        )
    try:
        deadline = time.monotonic() + 10
        while not (folder / "nginx.pid").exists():
            assert proc.poll() is None and time.monotonic() < deadline, (folder / "stderr.log").read_text()
            time.sleep(0.1)
        yield
    finally:
        proc.terminate()
        proc.wait(10)
