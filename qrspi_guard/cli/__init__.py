"""The command line: a click group whose commands are imported only when used.

Start-up time matters (pre-commit and agent hooks run the tool on every commit or
write), so each command lives in its own module and is imported lazily, and this
module imports no click at all: :func:`main` sends ``hook`` calls to the click-free
:mod:`qrspi_guard.hook.run` and only then builds the click group
(:mod:`qrspi_guard.cli.group`).
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

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
    # the review loop's drop-ins (loop.md) and the run overview (report.md)
    "fan-in": "qrspi_guard.cli.fanin:fan_in",
    "await": "qrspi_guard.cli.awaiting:await_round",
    "prepare": "qrspi_guard.cli.prepare:prepare",
    "review-prep": "qrspi_guard.cli.reviewprep:review_prep",
    "status": "qrspi_guard.cli.status:status",
    "report": "qrspi_guard.cli.report:report",
    # an upstream checkout adopted, and what is in place (README "Dropping the guard")
    "adopt": "qrspi_guard.cli.adopt:adopt",
    "doctor": "qrspi_guard.cli.doctor:doctor",
}
#: `hook` words that are click commands, not a tool-use payload on stdin
_HOOK_CLICK = frozenset({"install", "uninstall", "--help", "-h"})


def __getattr__(name: str) -> Any:
    """`cli` and `LazyGroup` live in :mod:`qrspi_guard.cli.group` (they need click)."""
    if name in ("cli", "LazyGroup"):
        from qrspi_guard.cli import group

        return getattr(group, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _hook_route(args: list[str]) -> bool:
    """A tool-use hook call: ``hook`` with neither a subcommand nor ``--help``."""
    return bool(args) and args[0] == "hook" and not (
        (len(args) > 1 and args[1] in _HOOK_CLICK) or "--help" in args or "-h" in args)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point, and the one place failures become exit codes.

    - a usage error (unknown option, missing argument, bad value): one line, exit 2;
    - a :class:`~qrspi_guard.errors.GuardError` raised by the core: its one line and its
      exit code (2 unless the error says otherwise);
    - stdout closed or full (``| head``, ``>&-``, ``/dev/full``): one line, exit 2;
    - Ctrl-C: exit 130;
    - anything else is a bug: `internal error`, one line, exit 2 (with the traceback
      under ``QRSPI_GUARD_DEBUG=1``). Never a traceback otherwise.

    (`hook` handles its own failures: they must not block an agent. Its calls take a
    click-free route, so a call that is not about a review round stays cheap.)
    """
    args = sys.argv[1:] if argv is None else list(argv)
    if _hook_route(args):
        from qrspi_guard.hook.run import main as hook_main

        hook_main(args[1:])
    _buffered_stdout()
    import click

    from qrspi_guard.cli.group import cli
    from qrspi_guard.errors import GuardError
    from qrspi_guard.textsafe import one_line

    try:
        rv = cli.main(args=argv, prog_name="qrspi-guard", standalone_mode=False)
        _flush_stdout()
    except click.exceptions.NoArgsIsHelpError as exc:  # a bare group: its help, readable
        _stderr(exc.ctx.get_help() + "\n" if exc.ctx is not None else exc.format_message())
        _silence_stdout()
        sys.exit(2)
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
        if type(sys.stdout).__name__ == "_PacifyFlushWrapper":
            # click caught a broken pipe itself and would exit quietly: say it, exit 2
            _fatal("error: cannot write to standard output: Broken pipe", 2)
        if _flush_stdout(quiet=True):
            raise
        _fatal("error: cannot write to standard output", 2)
    except OSError as exc:
        if _is_stdout_failure(exc):
            _fatal(f"error: cannot write to standard output: {exc.strerror or exc}", 2)
        _internal(exc)
    except Exception as exc:  # last-resort guard, never a traceback
        if sys.stdout is None:  # started with stdout closed (`>&-`): not a bug
            _fatal("error: cannot write to standard output: the stream is closed", 2)
        _internal(exc)
    sys.exit(rv if isinstance(rv, int) else 0)


def _buffered_stdout() -> None:
    """Put a buffered writer under an unbuffered stdout (``PYTHONUNBUFFERED=1``, common in
    containers and CI). Unbuffered, Python hands a large write to the pipe in one call,
    takes a partial write as done and drops the rest silently, so `check | head -1`
    exited 1 with no word; buffered, the rest is written or the broken pipe raised (one
    line, exit 2, as without the variable). Every write is still passed on at once."""
    import io

    raw = getattr(sys.stdout, "buffer", None)
    if not isinstance(raw, io.FileIO):
        return
    global OWN_STDOUT
    try:
        sys.stdout = OWN_STDOUT = io.TextIOWrapper(
            io.BufferedWriter(raw), encoding=sys.stdout.encoding, errors=sys.stdout.errors,
            write_through=True, line_buffering=True)
    except (ValueError, OSError):  # a closed stream: main() reports it when written
        pass


#: the buffered stdout :func:`_buffered_stdout` put in place, if any: still the process's
#: own standard output (the fast exit may skip the interpreter's teardown)
OWN_STDOUT: object = None


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
