"""The fault seam of split's write path, for tests.

Every disk step calls ``fault(step, name)`` first (steps: ``listed``, ``write``,
``sync-new``, ``intent``, ``commit``, ``place``, ``remove``, ``sync``, ``finish``, and
in a recovery ``recover-place``, ``recover-remove``, ``recover-drop``,
``recover-finish``). In-process tests pass any callable; end-to-end tests set
``QRSPI_GUARD_SPLIT_FAULT=ACTION@WHEN`` for the installed console script, in the
grammar of every fault seam (:mod:`qrspi_guard.faults`), a step's file name after a
space: WHEN is ``K`` (the K-th step of the run), a step (``place``: its first time) or
a step and a file name (``place quality-codex.finding-F02.md``); ACTION is ``kill``,
``stop``, ``enospc``, ``erofs``, ``eacces``, ``eintr`` or ``eio``. The fault fires once
a run; a value that does not parse is a usage error.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from qrspi_guard.faults import Fault as _Fault
from qrspi_guard.faults import FaultSpecError, raise_errno
from qrspi_guard.split.errors import SplitUsageError

Fault = Callable[[str, str], None]
ENV = "QRSPI_GUARD_SPLIT_FAULT"

__all__ = ["ENV", "Fault", "from_env", "no_fault", "parse", "raise_errno"]


def no_fault(step: str, name: str) -> None:
    return None


def parse(spec: str) -> Fault:
    """The fault a ``QRSPI_GUARD_SPLIT_FAULT`` value describes. Raises
    :class:`SplitUsageError`."""
    try:
        return _Fault(spec, " ", ENV)
    except FaultSpecError as exc:
        raise SplitUsageError(str(exc)) from None


def from_env() -> Fault:
    spec = os.environ.get(ENV)
    return parse(spec) if spec else no_fault
