"""``/healthz``, ``/readyz`` and ``/metrics`` of a long-running service, on one port.

Starlette on uvicorn, in a daemon thread: the service's own loop never serves HTTP. ``/healthz``
answers 200 as long as the process runs (alive: restart it if not); ``/readyz`` answers 200 only
once every readiness check holds (e.g. the model loaded and warmed up, the group joined, partitions
assigned), else 503 with the checks that do not, so an orchestrator or a compose healthcheck waits
for it. ``/metrics`` is Prometheus's text format from the service's registry.
"""

import logging
import threading
import time

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

from facestream.errors import ConfigError

log = logging.getLogger(__name__)
START_TIMEOUT_S = 10.0


class Readiness:
    """Named checks, each false until the service marks it; ready when all hold. Thread-safe."""

    def __init__(self, *checks: str) -> None:
        self._checks = dict.fromkeys(checks, False)
        self._lock = threading.Lock()

    def mark(self, check: str, holds: bool = True) -> None:
        with self._lock:
            self._checks[check] = holds

    def state(self) -> dict[str, bool]:
        with self._lock:
            return dict(self._checks)

    @property
    def ready(self) -> bool:
        return all(self.state().values())


def routes(readiness: Readiness, registry: CollectorRegistry) -> list:
    """Starlette routes of ``/healthz``, ``/readyz`` and ``/metrics``, for an app that serves more."""
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    async def healthz(_request) -> Response:
        return JSONResponse({"alive": True})

    async def readyz(_request) -> Response:
        checks = readiness.state()
        return JSONResponse(
            {"ready": all(checks.values()), "checks": checks}, status_code=200 if all(checks.values()) else 503
        )

    async def metrics(_request) -> Response:
        return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)

    return [Route("/healthz", healthz), Route("/readyz", readyz), Route("/metrics", metrics)]


def check_free(port: int, host: str, what: str) -> None:
    """ConfigError now if ``host``:``port`` cannot be bound: for a service to call before it starts the
    threads (Kafka readers, an index) that a failed start would leave running while the process exits."""
    import socket

    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server binds it
        try:
            probe.bind((host, port))
        except OSError:
            raise _taken(port, host, what) from None


def _taken(port: int, host: str, what: str) -> ConfigError:
    return ConfigError(f"cannot serve {what} on {host}:{port} (is the port taken?)")


def serve_app(app, port: int, host: str, what: str) -> None:
    """Serve the ASGI ``app`` on ``host``:``port`` from a daemon thread; return once it listens, or
    raise ConfigError (e.g. the port is taken). ``what`` names it in messages."""
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, name="http", daemon=True)
    thread.start()
    deadline = time.monotonic() + START_TIMEOUT_S
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise _taken(port, host, what)
        time.sleep(0.02)


def serve(readiness: Readiness, registry: CollectorRegistry, port: int, host: str = "127.0.0.1") -> None:
    """Start serving the three endpoints on ``host``:``port`` (this machine only unless told
    otherwise); return once it listens, or raise ConfigError (e.g. the port is taken)."""
    from starlette.applications import Starlette

    serve_app(Starlette(routes=routes(readiness, registry)), port, host, "/healthz, /readyz and /metrics")
    log.info("health and metrics on http://%s:%d (/healthz, /readyz, /metrics)", host, port)
