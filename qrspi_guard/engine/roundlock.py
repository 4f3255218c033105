"""One writer at a time per round: an exclusive ``flock`` on the round directory itself.

The lock is taken on the directory's own descriptor, so there is no lock file to leave
behind; the kernel releases it when the process ends, however it ends (``kill -9``
included). ``split`` holds it from its recovery and listing of the round to its last
rename; ``watch`` probes it (:func:`split_lock_held`) to tell a split at work from an
interrupted one.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from qrspi_guard.errors import GuardError

_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)


class LockTimeout(GuardError):
    """Another process held the round's lock for longer than the caller would wait."""

    def __init__(self, directory: str, waited: float, exit_code: int = 1) -> None:
        from qrspi_guard.textsafe import one_line

        super().__init__(f"the round lock on {one_line(directory)} is held by another run "
                         f"(waited {waited:g} s)")
        self.exit_code = exit_code


#: how long the loop commands wait for a round's lock (loop.md: at least 1 s, at most 60)
LOOP_LOCK_WAIT = 30.0


@contextmanager
def round_lock(round_dir: str, on_wait: Callable[[], None] | None = None,
               timeout: float | None = None, exit_code: int = 1,
               dir_fd: int | None = None) -> Iterator[int]:
    """Hold the round's lock; yields the directory's descriptor (for fsync).
    *on_wait* is called once when another process holds the lock and this one waits.
    With *timeout*, wait at most that many seconds, then raise :class:`LockTimeout`
    (carrying *exit_code*); without it, wait as long as it takes (``split``). With
    *dir_fd* (the round directory, already open), that very directory is locked and
    *round_dir* only names it."""
    fd = os.open(round_dir if dir_fd is None else ".", _DIR_FLAGS, dir_fd=dir_fd)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if on_wait is not None:
                on_wait()
            if timeout is None:
                fcntl.flock(fd, fcntl.LOCK_EX)
            else:
                _wait(fd, round_dir, timeout, exit_code)
        yield fd
    finally:
        os.close(fd)  # releases the lock


def _wait(fd: int, round_dir: str, timeout: float, exit_code: int) -> None:
    if not flock_within(fd, time.monotonic() + timeout):
        raise LockTimeout(round_dir, timeout, exit_code)


def flock_within(fd: int, deadline: float) -> bool:
    """Take an exclusive ``flock`` on *fd* before ``time.monotonic()`` reaches
    *deadline*, polling with a growing delay (at most 0.2 s): True when taken, False when
    the deadline passed first."""
    delay = 0.01
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            time.sleep(min(delay, left))
            delay = min(delay * 2, 0.2)


def split_lock_held(round_dir: str) -> bool:
    """True while some process holds the round's split lock (a split is at work).
    The probe takes a shared lock for an instant and never waits."""
    try:
        fd = os.open(round_dir, _DIR_FLAGS)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)
    return False
