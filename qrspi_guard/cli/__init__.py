"""The command line: a click group whose commands are imported only when used.

Start-up time matters (pre-commit and agent hooks run the tool on every commit or
write), so each command lives in its own module and is imported lazily, and this
module imports no click at all: :func:`main` sends ``hook`` calls to the click-free
:mod:`qrspi_guard.hook.run` and only then builds the click group
(:mod:`qrspi_guard.cli.group`).
"""

from __future__ import annotations

import errno
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable
    from typing import Any, NoReturn

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
    """Console-script entry point, and the one place failures become exit codes and
    lines, as :mod:`qrspi_guard.cli.conventions` says:

    - a usage error (unknown option, missing argument, bad value): one line naming the
      nearest known word, exit 2 (a drop-in: its upstream script's code);
    - a :class:`~qrspi_guard.errors.GuardError` raised by the core: its one line and its
      exit code (2 unless the error says otherwise);
    - a closed pipe on stdout (``| head``): quiet, the exit code the command had reached;
      stdout closed or full (``>&-``, ``/dev/full``): one line, exit 2;
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

    from qrspi_guard.cli import conventions
    from qrspi_guard.cli.group import cli
    from qrspi_guard.errors import GuardError

    conventions.begin(args[0] if args and args[0] in COMMANDS else None)
    try:
        rv = cli.main(args=args, prog_name="qrspi-guard", standalone_mode=False)
    except click.exceptions.NoArgsIsHelpError as exc:  # a bare group: its help, readable
        _stderr(exc.ctx.get_help() + "\n" if exc.ctx is not None else exc.format_message())
        _silence_stdout()
        sys.exit(2)
    except click.UsageError as exc:
        _fatal(conventions.usage_line(exc), conventions.bad_argument())
    except click.ClickException as exc:
        _fatal(conventions.error_line(exc.format_message()), exc.exit_code)
    except GuardError as exc:
        _fatal(conventions.error_line(str(exc)), exc.exit_code)
    except (click.Abort, KeyboardInterrupt):
        sys.exit(conventions.EXIT_INTERRUPTED)
    except SystemExit as exc:
        if "PacifyFlushWrapper" in type(sys.stdout).__name__:
            _closed_pipe(conventions.verdict())  # click caught a broken pipe itself
        _finish(exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1,
                conventions.error_line)
        raise
    except OSError as exc:
        if exc.errno == errno.EPIPE:
            _closed_pipe(conventions.verdict())
        if _is_stdout_failure(exc):
            _fatal(conventions.error_line(
                f"cannot write to standard output: {exc.strerror or exc}"), 2)
        _internal(exc, conventions.error_line)
    except Exception as exc:  # last-resort guard, never a traceback
        if sys.stdout is None:  # started with stdout closed (`>&-`): not a bug
            _fatal(conventions.error_line(
                "cannot write to standard output: the stream is closed"), 2)
        _internal(exc, conventions.error_line)
    code = rv if isinstance(rv, int) else 0
    _finish(code, conventions.error_line)
    sys.exit(code)


def _finish(code: int, error_line: Callable[[str], str]) -> None:
    """Flush stdout before exiting with *code*: a closed pipe ends quietly with *code*
    (the verdict reached), any other failure is one line and exit 2. Returns when the
    flush succeeded."""
    failure = _flush_stdout()
    if failure is None:
        return
    if failure == errno.EPIPE:
        _closed_pipe(code)
    why = os.strerror(failure) if failure > 0 else "the stream is closed"
    _fatal(error_line(f"cannot write to standard output: {why}"), 2)


def _closed_pipe(code: int) -> NoReturn:
    """The reader of stdout went away (``| head -1``): nothing to say, and the command's
    verdict stands (cli.md). Later writes go to /dev/null, so the interpreter's own
    final flush cannot fail a second time."""
    _silence_stdout(always=True)
    sys.exit(code)


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


def _flush_stdout() -> int | None:
    """Flush stdout now, inside the error handler (not at interpreter exit, where a
    failure is a traceback and exit 120): None when it worked, else the errno (-1: no
    stream at all)."""
    try:
        sys.stdout.flush()
    except OSError as exc:
        return exc.errno or -1
    except (ValueError, AttributeError):
        return -1
    return None


def _is_stdout_failure(exc: OSError) -> bool:
    return exc.errno in (errno.EPIPE, errno.ENOSPC, errno.EBADF, errno.EIO)


def _fatal(line: str, code: int) -> NoReturn:
    _stderr(f"{line}\n")
    _silence_stdout()
    sys.exit(code)


def _internal(exc: BaseException, error_line: Callable[[str], str]) -> NoReturn:
    from qrspi_guard.textsafe import one_line

    if os.environ.get("QRSPI_GUARD_DEBUG") not in (None, "", "0"):
        import traceback

        _stderr("".join(traceback.format_exception(exc)))
    _fatal(error_line(f"internal error: {type(exc).__name__}: {one_line(str(exc))}"), 2)


def _stderr(text: str) -> None:
    try:
        sys.stderr.write(text)
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        pass


def _silence_stdout(always: bool = False) -> None:
    """After a stdout failure (or *always*, after a closed pipe), point fd 1 at /dev/null
    so the interpreter's own final flush cannot fail a second time (and print a
    traceback)."""
    try:
        sys.stdout.flush()
        failed = always
    except (OSError, ValueError, AttributeError):
        failed = True
    if failed and _owns_fd1():
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.close(devnull)
        except OSError:
            pass


def _owns_fd1() -> bool:
    """Whether stdout is this process's descriptor 1 (or gone), not a stream a caller
    captured in memory (click's test runner), whose descriptor 1 is not ours to move."""
    import io

    stream = sys.stdout
    try:
        return stream is None or stream.fileno() == 1
    except io.UnsupportedOperation:
        return False
    except (AttributeError, ValueError, OSError):
        return True
