"""Running a click command the facestream way: one log set-up, and facestream's errors turned into
one line on stderr and the exit code the error class carries (``facestream.errors``).

Every entry point uses it: the ``facestream`` hub and each service's ``python -m`` module.
"""

import sys

import click

from facestream import logs
from facestream.errors import FacestreamError


def run(command: click.Command, env_prefix: str, setup_logging: bool = True) -> None:
    """Run ``command`` with options also read from ``<env_prefix>_<OPTION>``; never returns."""
    if setup_logging:
        logs.setup()
    try:
        code = command.main(standalone_mode=False, auto_envvar_prefix=env_prefix)
    except click.exceptions.Abort:
        code = 130
    except click.ClickException as exc:
        exc.show()
        code = exc.exit_code
    except FacestreamError as exc:
        click.echo(f"error: {exc}", err=True)
        code = exc.exit_code
    except KeyboardInterrupt:
        code = 130
    sys.exit(code if isinstance(code, int) else 0)
