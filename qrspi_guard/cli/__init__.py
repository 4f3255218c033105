"""The command line: a click group whose commands are imported only when used.

Start-up time matters (pre-commit and agent hooks run the tool on every commit or
write), so each command lives in its own module and is imported lazily.
"""

from __future__ import annotations

import importlib
import sys

import click

from qrspi_guard import __version__

#: command name -> "module:attribute"; adding a command touches only this table.
COMMANDS: dict[str, str] = {
    "check": "qrspi_guard.cli.check:check",
    "watch": "qrspi_guard.cli.watch:watch",
    "split": "qrspi_guard.cli.split:split",
    "hook": "qrspi_guard.cli.hook:hook",
    "verdict": "qrspi_guard.cli.verdict:verdict",
    "lockout": "qrspi_guard.cli.lockout:lockout",
    "matrix": "qrspi_guard.cli.matrix:matrix",
    "schema": "qrspi_guard.cli.schema:schema",
    "explain": "qrspi_guard.cli.explain:explain",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, attr = target.split(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:  # a command not built yet
            if exc.name == module_name:
                return None
            raise
        return getattr(module, attr)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="qrspi-guard")
def cli() -> None:
    """Keep QRSPI review rounds honest: validate, watch, split, hook, verdict, lockout."""


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point.

    A usage error (unknown option, missing argument) is one line on stderr and exit 2;
    Ctrl-C is exit 130; a crash is one line, `internal error`, and exit 2. Never a
    traceback. (`hook` handles its own usage errors: they must not block an agent.)
    """
    from qrspi_guard.textsafe import one_line

    try:
        rv = cli.main(args=argv, prog_name="qrspi-guard", standalone_mode=False)
    except click.UsageError as exc:
        where = exc.ctx.command_path if exc.ctx is not None else "qrspi-guard"
        click.echo(f"qrspi-guard: error: {one_line(exc.format_message())} "
                   f"(see '{where} --help')", err=True)
        sys.exit(2)
    except click.ClickException as exc:
        click.echo(f"qrspi-guard: error: {one_line(exc.format_message())}", err=True)
        sys.exit(exc.exit_code)
    except (click.Abort, KeyboardInterrupt):
        sys.exit(130)
    except SystemExit:
        raise
    except Exception as exc:  # last-resort guard, never a traceback
        click.echo(f"qrspi-guard: internal error: {type(exc).__name__}: {one_line(str(exc))}",
                   err=True)
        sys.exit(2)
    sys.exit(rv if isinstance(rv, int) else 0)
