"""The hook's private directories: where one hook call leaves what a later one reads
(the shell calls' records, :mod:`~qrspi_guard.hook.callstore`; the notices already
told, :mod:`~qrspi_guard.hook.told`), one directory per purpose.

``$XDG_RUNTIME_DIR/qrspi-guard-<purpose>/`` when ``XDG_RUNTIME_DIR`` is a directory of
the user's that no one else can enter (the per-user runtime directory, removed when the
user's last session ends), else ``qrspi-guard-<purpose>-<uid>/`` in the temporary
directory (``TMPDIR``, ``TEMP`` or ``TMP``, else ``/tmp``). Every directory is created
``0700`` and used only when it is a real directory owned by the user with no group or
other access (else another user could plant or remove entries), opened as a
descriptor without following links; everything in it is named relative to that
descriptor. What is left there is removed by age, a bounded batch at a time.
"""

from __future__ import annotations

import os
import stat
import time

_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) \
    | getattr(os, "O_CLOEXEC", 0)

#: (modification time, size, name, is a directory) of a directory entry
Listed = tuple[float, int, str, bool]


def root(purpose: str) -> str:
    """The private directory for *purpose* (see the module docstring)."""
    uid = os.getuid()
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if os.path.isabs(runtime):
        try:
            st = os.stat(runtime)
        except OSError:
            st = None
        if st is not None and stat.S_ISDIR(st.st_mode) and st.st_uid == uid \
                and not st.st_mode & 0o077:
            return os.path.join(runtime, f"qrspi-guard-{purpose}")
    temp = next((v for v in (os.environ.get(k, "") for k in ("TMPDIR", "TEMP", "TMP"))
                 if os.path.isabs(v) and os.path.isdir(v)), "/tmp")
    return os.path.join(temp, f"qrspi-guard-{purpose}-{uid}")


def open_dir(name: str, dir_fd: int | None, create: bool) -> int | None:
    """A descriptor of directory *name* (in *dir_fd*), made ``0700`` when *create*;
    None unless it is the user's own, closed to everyone else. Raises OSError."""
    if create:
        try:
            os.mkdir(name, 0o700, dir_fd=dir_fd)
        except FileExistsError:
            pass
    fd = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    st = os.fstat(fd)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        os.close(fd)
        return None
    return fd


def open_root(purpose: str, create: bool) -> int | None:
    """:func:`open_dir` of :func:`root`, None where it cannot be opened either."""
    try:
        return open_dir(root(purpose), None, create)
    except OSError:
        return None


def listing(dir_fd: int, limit: int) -> list[Listed]:
    """(mtime, size, name, is a directory) of at most *limit* entries. Raises OSError."""
    out: list[Listed] = []
    with os.scandir(dir_fd) as it:
        for entry in it:
            if len(out) >= limit:
                break
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            out.append((st.st_mtime, st.st_size, entry.name, stat.S_ISDIR(st.st_mode)))
    return out


def unlink(name: str, dir_fd: int) -> None:
    """Remove *name* in *dir_fd*, if it can be."""
    try:
        os.unlink(name, dir_fd=dir_fd)
    except OSError:
        pass


def remove_older(dir_fd: int, seconds: float, limit: int) -> None:
    """Remove the files among the first *limit* entries of *dir_fd* not modified for
    *seconds*."""
    cutoff = time.time() - seconds
    try:
        entries = listing(dir_fd, limit)
    except OSError:
        return
    for mtime, _, name, is_dir in entries:
        if not is_dir and mtime < cutoff:
            unlink(name, dir_fd)
