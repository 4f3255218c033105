"""Fault injection for tests: the one grammar of the fault seams, and their firing.

A disk-writing path calls a seam first at each of its steps, ``fault(step, name)``; the
seam makes the process kill or stop itself, or fail with an OS error, at the one step a
test names. End-to-end tests name it in an environment variable of the console script
(leave them unset):

- ``QRSPI_GUARD_SPLIT_FAULT`` (:mod:`qrspi_guard.split.faults`): split's write path,
  its file name after a space (``place quality-codex.finding-F02.md``);
- ``QRSPI_GUARD_WRITE_FAULT`` (:func:`qrspi_guard.output.files.fault`): every atomic
  output write, its file name (a target's base name) after a colon
  (``rename:round-01.absorption-map.tsv``).

A value is ``ACTION@WHEN``:

- WHEN: ``K`` (the K-th step, from 1), a step (its first time), or a step and a file
  name. The fault fires once.
- ACTION: ``kill`` (SIGKILL itself: what no handler can catch), ``stop`` (SIGSTOP
  itself, so a test can act while the process is frozen at that step, then SIGCONT it),
  or an error raised there: ``enospc``, ``erofs``, ``eacces``, ``eintr``, ``eio``.
"""

from __future__ import annotations

import errno
import os
import signal

_ERRORS = {"enospc": errno.ENOSPC, "erofs": errno.EROFS, "eacces": errno.EACCES,
           "eintr": errno.EINTR, "eio": errno.EIO}
_SIGNALS = {"kill": signal.SIGKILL, "stop": signal.SIGSTOP}
ACTIONS = tuple(sorted(_ERRORS | _SIGNALS))


class FaultSpecError(ValueError):
    """A value that is not ``ACTION@WHEN`` (the message names the variable and says so)."""


def raise_errno(code: int) -> None:
    """Raise the OSError subclass the OS would raise for *code* (ENOSPC, EINTR, ...)."""
    raise OSError(code, os.strerror(code))


class Fault:
    """One ``ACTION@WHEN``, parsed once: called at every step, it fires once, at the
    K-th call or at the first call at its step (with its name, when it names one).
    *sep* is what parts a step from a file name in WHEN; *env* names the variable in
    the error. Raises :class:`FaultSpecError`."""

    def __init__(self, spec: str, sep: str, env: str) -> None:
        action, at, when = spec.partition("@")
        action = action.strip().lower()
        when = when.strip()
        if not at or not when or (action not in _ERRORS and action not in _SIGNALS):
            raise FaultSpecError(f"{env}={spec!r} is not ACTION@WHEN with ACTION one of "
                                 f"{', '.join(ACTIONS)}")
        self.action = action
        self.count = int(when) if when.isdigit() and len(when) < 10 else None
        self.step, _, self.name = when.partition(sep)
        self.calls = 0
        self.fired = False

    def __call__(self, step: str, name: str) -> None:
        self.calls += 1
        if self.fired:
            return
        if self.count is not None:
            hit = self.calls == self.count
        else:
            hit = step == self.step and (not self.name or name == self.name)
        if not hit:
            return
        self.fired = True
        if self.action in _SIGNALS:
            os.kill(os.getpid(), _SIGNALS[self.action])
        else:
            raise_errno(_ERRORS[self.action])


class EnvFault:
    """The fault environment variable *env* describes, read at every step (so a test
    may set it in-process) and parsed once per value; unset, or a value that does not
    parse, is no fault. It fires once in a process."""

    def __init__(self, env: str, sep: str) -> None:
        self.env = env
        self.sep = sep
        self.fired = False
        self._spec: str | None = None
        self._fault: Fault | None = None

    def __call__(self, step: str, name: str) -> None:
        spec = os.environ.get(self.env)
        if not spec or self.fired:
            return
        if spec != self._spec:
            self._spec = spec
            try:
                self._fault = Fault(spec, self.sep, self.env)
            except FaultSpecError:
                self._fault = None
        if self._fault is not None:
            try:
                self._fault(step, name)
            finally:
                self.fired = self._fault.fired
