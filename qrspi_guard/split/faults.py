"""The fault seam of split's write path, for tests.

Every disk step calls ``fault(step, name)`` first (steps: ``listed``, ``write``,
``sync-new``, ``intent``, ``commit``, ``place``, ``remove``, ``sync``, ``finish``, and
in a recovery ``recover-place``, ``recover-remove``, ``recover-drop``,
``recover-finish``). In-process tests pass any callable; end-to-end tests set
``QRSPI_GUARD_SPLIT_FAULT=ACTION@WHEN`` for the installed console script:

- WHEN: ``K`` (the K-th step of the run, from 1), a step (``place``: its first time) or
  a step and a file name (``place quality-codex.finding-F02.md``). The fault fires once.
- ACTION: ``kill`` (SIGKILL itself: what no handler can catch), ``stop`` (SIGSTOP
  itself, so a test can act while the split is frozen at that step, then SIGCONT it),
  or an error raised there: ``enospc``, ``erofs``, ``eacces``, ``eintr``, ``eio``.
"""

from __future__ import annotations

import errno
import os
import signal
from collections.abc import Callable

from qrspi_guard.split.errors import SplitUsageError

Fault = Callable[[str, str], None]
ENV = "QRSPI_GUARD_SPLIT_FAULT"

_ERRORS = {"enospc": errno.ENOSPC, "erofs": errno.EROFS, "eacces": errno.EACCES,
           "eintr": errno.EINTR, "eio": errno.EIO}
_SIGNALS = {"kill": signal.SIGKILL, "stop": signal.SIGSTOP}


def no_fault(step: str, name: str) -> None:
    return None


def raise_errno(code: int) -> None:
    """Raise the OSError subclass the OS would raise for *code* (ENOSPC, EINTR, ...)."""
    raise OSError(code, os.strerror(code))


def parse(spec: str) -> Fault:
    """The fault a ``QRSPI_GUARD_SPLIT_FAULT`` value describes."""
    action, at, when = spec.partition("@")
    action = action.strip().lower()
    if not at or not when.strip() or (action not in _ERRORS and action not in _SIGNALS):
        raise SplitUsageError(f"{ENV}={spec!r} is not ACTION@WHEN with ACTION one of "
                              f"{', '.join(sorted(_ERRORS | _SIGNALS))}")
    when = when.strip()
    count = int(when) if when.isdigit() and len(when) < 10 else None
    step, _, name = when.partition(" ")
    calls = 0
    fired = False

    def fault(s: str, n: str) -> None:
        nonlocal calls, fired
        calls += 1
        if fired:
            return
        if count is not None:
            hit = calls == count
        else:
            hit = s == step and (not name or n == name)
        if not hit:
            return
        fired = True
        if action in _SIGNALS:
            os.kill(os.getpid(), _SIGNALS[action])
        else:
            raise_errno(_ERRORS[action])

    return fault


def from_env() -> Fault:
    spec = os.environ.get(ENV)
    return parse(spec) if spec else no_fault
