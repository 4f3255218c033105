"""How a command ends its process: signals that unwind it, and the fast exit.

Both are shared by the commands that write (``check``, ``split``, ``fan-in``, ``await``);
this module imports nothing beyond the standard library, so a command's start-up pays
nothing for it.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn


@contextmanager
def term_as_exit() -> Iterator[None]:
    """SIGTERM and SIGHUP become ``SystemExit(128 + signal)`` inside the block, so the
    command unwinds: ``split`` undoes its writes, ``await`` kills its command's group."""
    def handler(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    saved = {}
    for sig in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if sig is not None:
            saved[sig] = signal.signal(sig, handler)
    try:
        yield
    finally:
        for sig, old in saved.items():
            signal.signal(sig, old)


def fast_exit(code: int) -> NoReturn:
    """Exit with *code*. From the console script, skip the interpreter's teardown once
    the output is flushed: freeing every module and object costs milliseconds that a
    pre-commit user or an orchestrator waits for, and the command has nothing left to
    clean up (files it wrote are closed). Embedded callers (click's runner, tests) exit
    normally. A closed or broken stdout is left to :func:`qrspi_guard.cli.main` (a
    closed pipe: quiet, exit *code*; any other failure: one line, exit 2)."""
    from qrspi_guard import cli

    own = sys.stdout is sys.__stdout__ or (sys.stdout is not None
                                           and sys.stdout is cli.OWN_STDOUT)
    if (os.path.basename(sys.argv[0]).startswith("qrspi-guard") and own
            and sys.stderr is sys.__stderr__
            and not os.environ.get("QRSPI_GUARD_NO_FAST_EXIT")):
        try:
            # no stdout or stderr at all (None) is the AttributeError caught below
            sys.stdout.flush()
            sys.stderr.flush()  # type: ignore[union-attr]
        except (ValueError, AttributeError):
            pass  # no stdout at all: let main() report it
        else:
            os._exit(code)
    else:
        sys.stdout.flush()  # a failure here is main()'s (cli.conventions)
    sys.exit(code)
