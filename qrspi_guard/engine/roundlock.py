"""One split at a time per round: an exclusive ``flock`` on the round directory itself.

The lock is taken on the directory's own descriptor, so there is no lock file to leave
behind; the kernel releases it when the process ends, however it ends (``kill -9``
included). ``split`` holds it from its recovery and listing of the round to its last
rename; ``watch`` probes it (:func:`split_lock_held`) to tell a split at work from an
interrupted one.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager

_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)


@contextmanager
def round_lock(round_dir: str, on_wait: Callable[[], None] | None = None) -> Iterator[int]:
    """Hold the round's split lock; yields the directory's descriptor (for fsync).
    *on_wait* is called once when another split holds the lock and this one waits."""
    fd = os.open(round_dir, _DIR_FLAGS)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if on_wait is not None:
                on_wait()
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield fd
    finally:
        os.close(fd)  # releases the lock


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
