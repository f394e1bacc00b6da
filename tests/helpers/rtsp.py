"""Real RTSP cameras for the tests: GStreamer's RTSP server (``bench/rtsp_camera.py`` on Debian's
Python, which has GStreamer's bindings) streaming OpenCV's vtest.avi as H.264, each frame stamped with
when it was sent; and a port that takes connections and never answers (see ``pythonpath`` in pyproject)."""

import socket
import subprocess
import time
from pathlib import Path

import numpy as np

from bench.stamp import read_stamp

SYSTEM_PYTHON = "/usr/bin/python3"  # Debian's, with python3-gi and gir1.2-gst-rtsp-server-1.0
SERVER = Path(__file__).resolve().parents[2] / "bench" / "rtsp_camera.py"


class RtspCamera:
    """One RTSP server on its own port, started and killed at will (the port stays the camera's)."""

    def __init__(self, footage: Path, port: int, *args: str) -> None:
        self.footage, self.port, self.args = footage, port, args
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"rtsp://127.0.0.1:{self.port}/stream"

    def url_with(self, credentials: str) -> str:
        return f"rtsp://{credentials}@127.0.0.1:{self.port}/stream"

    def start(self) -> "RtspCamera":
        command = [SYSTEM_PYTHON, str(SERVER), "--port", str(self.port), "--source", str(self.footage), *self.args]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        line = self.process.stdout.readline()  # "serving rtsp://..." once clients can connect
        if not line.startswith("serving"):
            output = line + self.process.stdout.read()
            raise RuntimeError(
                f"the RTSP camera did not start (Debian's python3-gi, gir1.2-gst-rtsp-server-1.0 and "
                f"GStreamer's plugins are needed; .ci/run installs them):\n{output}"
            )
        return self

    def kill(self) -> float:
        """Kill the server as a crash or a power cut would; return when (time.time())."""
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None
        return time.time()


class SilentPort:
    """A port that accepts connections and never says a word: a camera that hangs."""

    def __init__(self) -> None:
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.socket.listen(16)
        self.port = self.socket.getsockname()[1]

    @property
    def url(self) -> str:
        return f"rtsp://127.0.0.1:{self.port}/stream"

    def close(self) -> None:
        self.socket.close()


def staleness_ms(image: np.ndarray, capture_ts_ns: int) -> float | None:
    """How old a frame was when the producer captured it: its capture time minus when the camera sent it
    (the stamp in its pixels); None when it carries no readable stamp."""
    stamp = read_stamp(image)
    return None if stamp is None else capture_ts_ns / 1e6 - stamp[0]
