"""A broker with a TLS + SCRAM listener for tests: its certificate and its ports (see ``pythonpath``
in pyproject)."""

import socket
import subprocess
from pathlib import Path


def free_ports() -> tuple[int, int]:
    """(broker port, secure port): the broker's controller takes the port after its own, so the
    three must be free and distinct."""
    while True:
        with socket.socket() as a, socket.socket() as b:
            a.bind(("127.0.0.1", 0))
            b.bind(("127.0.0.1", 0))
            port, secure = a.getsockname()[1], b.getsockname()[1]
        if secure not in (port, port + 1) and port + 1 < 65536:
            try:
                with socket.socket() as controller:
                    controller.bind(("127.0.0.1", port + 1))
                return port, secure
            except OSError:
                continue


def certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 in a PKCS12 keystore, and the same certificate as the
    clients' CA file (Java's keytool: the broker needs Java anyway)."""
    keystore, ca = folder / "broker.p12", folder / "ca.pem"
    common = ["-keystore", str(keystore), "-storetype", "PKCS12", "-storepass", "keypass"]
    subprocess.run(
        ["keytool", "-genkeypair", "-alias", "broker", "-keyalg", "RSA", "-keysize", "2048", "-validity", "2"]
        + ["-dname", "CN=localhost", "-ext", "SAN=ip:127.0.0.1,dns:localhost", "-keypass", "keypass", *common],
        check=True,
        capture_output=True,
    )
    subprocess.run(
        ["keytool", "-exportcert", "-rfc", "-alias", "broker", "-file", str(ca), *common],
        check=True,
        capture_output=True,
    )
    return keystore, ca
