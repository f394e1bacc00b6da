"""Running a click command the facestream way: one log set-up, and facestream's errors turned into
one line on stderr and the exit code the error class carries (``facestream.errors``).

Every entry point uses it: the ``facestream`` hub and each service's ``python -m`` module.
"""

import os
import sys

import click

from facestream import extras, kafka_access, logs
from facestream.errors import ConfigError, FacestreamError
from facestream.text_limits import checked_texts


def check_environment(command: click.Command | None, env_prefix: str) -> None:
    """``<env_prefix>_<OPTION>`` variables must name an option of ``command``: a misspelt one (or one
    for a setting that does not exist, like a SASL mechanism) is an error, never silently ignored."""
    if command is None or isinstance(command, click.Group):
        return
    prefix = f"{env_prefix}_"
    known = {f"{prefix}{p.name.upper()}" for p in command.params if isinstance(p, click.Option) and p.name}
    unknown = sorted(key for key in os.environ if key.startswith(prefix) and key not in known)
    if unknown:
        valid = ", ".join(sorted(known))
        raise ConfigError(f"unknown environment variable(s) {', '.join(unknown)} for `{command.name}`; valid: {valid}")


def run(command: click.Command, env_prefix: str, setup_logging: bool = True) -> None:
    """Run ``command`` with options also read from ``<env_prefix>_<OPTION>``; never returns."""
    if setup_logging:
        logs.setup()
    try:
        check_environment(command, env_prefix)
        code = checked_texts(command).main(standalone_mode=False, auto_envvar_prefix=env_prefix)
    except click.exceptions.Abort:
        code = 130
    except click.UsageError as exc:  # a bad option: one line, before any work
        where = exc.ctx.command_path if exc.ctx is not None else "facestream"
        click.echo(f"error: {exc.format_message()} (`{where} --help` lists the options)", err=True)
        code = exc.exit_code
    except click.ClickException as exc:
        exc.show()
        code = exc.exit_code
    except FacestreamError as exc:
        click.echo(f"error: {exc}", err=True)
        code = exc.exit_code
    except KeyboardInterrupt:
        code = 130
    except ModuleNotFoundError as exc:  # a light install (an edge producer's) without this command's extra
        sentence = extras.missing_extra(exc)
        if sentence is None:
            raise
        click.echo(f"error: {sentence}", err=True)
        code = ConfigError.exit_code
    except Exception as exc:  # a Kafka client's own exception: explained plainly when the ACLs are the reason
        refused = kafka_access.refusal_in(exc)
        if refused is None:
            raise
        click.echo(f"error: {refused}", err=True)
        code = refused.exit_code
    sys.exit(code if isinstance(code, int) else 0)
