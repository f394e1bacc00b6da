"""Kafka client settings beyond the broker's address: TLS, SASL, or any other librdkafka property,
one set for every client of every facestream process.

They come from, later ones winning:

1. ``FACESTREAM_KAFKA_CONFIG``: a properties file in the format of Kafka's own ``client.properties``
   (``security.protocol=SASL_SSL``, one per line, ``#`` comments), which keeps secrets off command
   lines and out of process listings;
2. the ``[kafka]`` table of the TOML config file (``facestream --config``);
3. ``facestream --kafka KEY=VALUE`` (repeatable).

The hub puts 2 and 3 into its environment (``FACESTREAM_KAFKA_SETTINGS``, JSON), so the services
it starts (the demo, replicas) use the same ones. A name librdkafka does not know is an error when
the first client is made, never ignored; secrets are shown masked (``masked``) and never logged.
"""

import json
import os
from pathlib import Path

from facestream.errors import ConfigError

ENV_FILE = "FACESTREAM_KAFKA_CONFIG"
ENV_MERGED = "FACESTREAM_KAFKA_SETTINGS"
# Set by facestream itself, per client: a setting for every client would break the services.
OWN = {
    "bootstrap.servers": "set KAFKA_BOOTSTRAP instead",
    "group.id": "each service names its own group (--group)",
    "client.id": "each client names itself",
}
SECRET_WORDS = ("password", "secret", "token", "pem", "jaas")


def load() -> dict[str, str]:
    """The settings in force in this process, checked."""
    settings: dict[str, str] = {}
    path = os.environ.get(ENV_FILE)
    if path:
        settings |= read_properties(Path(path))
    merged = os.environ.get(ENV_MERGED)
    if merged:
        try:
            settings |= {str(k): str(v) for k, v in json.loads(merged).items()}
        except (ValueError, AttributeError) as exc:
            raise ConfigError(f"{ENV_MERGED} is not a JSON object of Kafka settings: {exc}") from None
    check(settings, "the Kafka settings")
    return settings


def add(values: dict[str, str], where: str) -> None:
    """Put ``values`` over the settings of this process and of every process it starts."""
    check(values, where)
    current = json.loads(os.environ.get(ENV_MERGED) or "{}")
    os.environ[ENV_MERGED] = json.dumps({**current, **values})


def parse_pair(text: str) -> tuple[str, str]:
    """``KEY=VALUE`` as ``--kafka`` takes it."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise ValueError(f"expected KEY=VALUE (a librdkafka property, e.g. security.protocol=SASL_SSL), got {text!r}")
    return key.strip(), value.strip()


def read_properties(path: Path) -> dict[str, str]:
    """A client.properties file: ``key=value`` (or ``key: value``) lines, ``#`` and ``!`` comments."""
    try:
        text = path.read_text()
    except OSError as exc:
        raise ConfigError(f"{ENV_FILE}: cannot read {path}: {exc}") from None
    settings = {}
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line[0] in "#!":
            continue
        cut = min((i for i in (line.find("="), line.find(":")) if i > 0), default=-1)
        if cut < 0:
            raise ConfigError(f"{path}:{number}: expected key=value, got {line!r}")
        settings[line[:cut].strip()] = line[cut + 1 :].strip()
    return settings


def check(settings: dict[str, str], where: str) -> None:
    """Refuse the settings facestream sets itself, with what to do instead."""
    for key in settings:
        if key in OWN:
            raise ConfigError(f"{where}: {key!r} cannot be set for every client: {OWN[key]}")


def is_secret(key: str) -> bool:
    return any(word in key.lower() for word in SECRET_WORDS)


def masked(settings: dict[str, str]) -> dict[str, str]:
    """``settings`` fit to show: every secret's value replaced."""
    return {key: "********" if is_secret(key) else value for key, value in settings.items()}
