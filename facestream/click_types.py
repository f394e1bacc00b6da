"""Option parsers shared by the command-line tools."""

import click


def size(_ctx, _param, value: str | None) -> tuple[int, int] | None:
    """``WIDTHxHEIGHT`` (e.g. 640x480) -> (width, height); no value stays None."""
    if value is None:
        return None
    try:
        width, height = (int(v) for v in value.lower().split("x"))
    except ValueError:
        raise click.BadParameter(f"expected WIDTHxHEIGHT, e.g. 640x480, got {value!r}") from None
    if width < 1 or height < 1:
        raise click.BadParameter(f"width and height must be >= 1, got {value!r}")
    return width, height
