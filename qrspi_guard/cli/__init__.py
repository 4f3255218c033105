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
    """Console-script entry point, and the one place failures become exit codes.

    - a usage error (unknown option, missing argument, bad value): one line, exit 2;
    - a :class:`~qrspi_guard.errors.GuardError` raised by the core: its one line and its
      exit code (2 unless the error says otherwise);
    - stdout closed or full (``| head``, ``>&-``, ``/dev/full``): one line, exit 2;
    - Ctrl-C: exit 130;
    - anything else is a bug: `internal error`, one line, exit 2 (with the traceback
      under ``QRSPI_GUARD_DEBUG=1``). Never a traceback otherwise.

    (`hook` handles its own failures: they must not block an agent.)
    """
    from qrspi_guard.errors import GuardError
    from qrspi_guard.textsafe import one_line

    try:
        rv = cli.main(args=argv, prog_name="qrspi-guard", standalone_mode=False)
        _flush_stdout()
    except click.UsageError as exc:
        where = exc.ctx.command_path if exc.ctx is not None else "qrspi-guard"
        _fatal(f"error: {one_line(exc.format_message())} (see '{where} --help')", 2)
    except click.ClickException as exc:
        _fatal(f"error: {one_line(exc.format_message())}", exc.exit_code)
    except GuardError as exc:
        _fatal(f"error: {one_line(str(exc))}", exc.exit_code)
    except (click.Abort, KeyboardInterrupt):
        sys.exit(130)
    except SystemExit:
        if _flush_stdout(quiet=True):
            raise
        _fatal("error: cannot write to standard output", 2)
    except OSError as exc:
        if _is_stdout_failure(exc):
            _fatal(f"error: cannot write to standard output: {exc.strerror or exc}", 2)
        _internal(exc)
    except Exception as exc:  # last-resort guard, never a traceback
        _internal(exc)
    sys.exit(rv if isinstance(rv, int) else 0)


def _flush_stdout(quiet: bool = False) -> bool:
    """Flush stdout now, inside the error handler (not at interpreter exit, where a
    failure is a traceback and exit 120). With *quiet*, report success as a bool."""
    try:
        sys.stdout.flush()
    except (OSError, ValueError, AttributeError):
        if quiet:
            return False
        raise OSError(32, "the stream is closed") from None
    return True


def _is_stdout_failure(exc: OSError) -> bool:
    import errno

    return exc.errno in (errno.EPIPE, errno.ENOSPC, errno.EBADF, errno.EIO, 32)


def _fatal(line: str, code: int) -> None:
    _stderr(f"qrspi-guard: {line}\n")
    _silence_stdout()
    sys.exit(code)


def _internal(exc: BaseException) -> None:
    import os

    from qrspi_guard.textsafe import one_line

    if os.environ.get("QRSPI_GUARD_DEBUG") not in (None, "", "0"):
        import traceback

        _stderr("".join(traceback.format_exception(exc)))
    _fatal(f"internal error: {type(exc).__name__}: {one_line(str(exc))}", 2)


def _stderr(text: str) -> None:
    try:
        sys.stderr.write(text)
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        pass


def _silence_stdout() -> None:
    """After a stdout failure, point fd 1 at /dev/null so the interpreter's own final
    flush cannot fail a second time (and print a traceback)."""
    import os

    try:
        sys.stdout.flush()
    except (OSError, ValueError, AttributeError):
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.close(devnull)
        except OSError:
            pass
