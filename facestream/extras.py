"""Which install extra brings a module: a light install (`pip install facestream`, an edge producer)
lacks the services' packages, and a command that needs one says which extra to add, in one line,
instead of a traceback that names a module the user never chose.

pyproject.toml's ``[project.optional-dependencies]`` is the list of record; ``tests/facestream/
test_extras.py`` checks this map against it and runs each command on a light install.
"""

EXTRA_OF = {  # the top-level module -> the extra that installs it
    "onnx": "detector",
    "onnxruntime": "detector",
    "onnxconverter_common": "detector",
    "cv2": "detector",
    "orjson": "alerting",
    "sqlalchemy": "store",
    "alembic": "store",
    "psycopg": "store",
    "argon2": "store",
    "apprise": "notify",
    "paho": "notify",
    "usearch": "search",
}
EXTRA_OF_COMMAND = {  # a ``facestream`` command -> the extra that installs all it needs
    "detect": "detector",
    "pose": "detector",
    "models": "detector",
    "gallery": "detector",
    "export": "detector",
    "alerting": "alerting",
    "alert-store": "store",
    "alerts": "store",
    "users": "store",
    "notify": "notify",
    "dashboard": "dashboard",
    "search": "dashboard",
    "demo": "all",
}


def missing_extra(exc: ModuleNotFoundError, command: str | None = None) -> str | None:
    """The sentence for a module an extra would bring (the extra of ``command`` when that is known:
    it brings the rest too); None for any other missing module (a bug, or a package outside the
    extras: its own traceback is the better report)."""
    top = (exc.name or "").split(".")[0]
    extra = EXTRA_OF.get(top)
    if extra is None:
        return None
    extra = EXTRA_OF_COMMAND.get(command or "", extra)
    return f"this needs the {extra} extra ({top} is not installed): pip install 'facestream[{extra}]'"
