"""Credentials kept out of everything people and other programs see: logs, metrics, records and
``config show``. Cameras are usually reached as ``rtsp://user:password@host/...``, and some take the
secret as a query parameter instead (``?user=admin&password=...``); both are masked wherever a
source or an error that quotes one is shown."""

import re

MASK = "***"
_USERINFO = re.compile(r"(?P<scheme>\b[a-zA-Z][a-zA-Z0-9+.-]*://)[^/@\s'\"]+@")
_SECRET_PARAM = re.compile(
    r"(?P<name>[?&;](?:user(?:name)?|pass(?:word)?|pwd|token|secret|auth|key)=)[^&;#\s'\"]*", re.I
)


def redact(text: str) -> str:
    """``text`` with the user and password of every URL in it, and query parameters that look like
    credentials, replaced by ``***``: ``rtsp://admin:pw@10.0.0.7/s1`` -> ``rtsp://***@10.0.0.7/s1``."""
    text = _USERINFO.sub(lambda m: f"{m['scheme']}{MASK}@", text)
    return _SECRET_PARAM.sub(lambda m: f"{m['name']}{MASK}", text)


def has_secret(text: str) -> bool:
    """True when ``redact`` would change ``text``."""
    return redact(text) != text
