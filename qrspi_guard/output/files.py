"""Writing check's outputs so that a failure or a kill leaves the old file or the new.

- :func:`write_in`: temp file in the same directory, write, fsync, rename, fsync
  the directory, every step relative to an open directory descriptor
  (:class:`~qrspi_guard.parse.nofollow.Dir`), never a re-resolved path. A failure at any
  step removes the temp file and leaves the target as it was; a kill can leave only a
  hidden temp file beside it (``.guard-*.tmp``, which ``check`` and ``watch`` ignore).
  :func:`write_round_file` is it for a file of a run's `reviews/` tree (status files,
  ``--fix``): its directories opened without following links; :func:`write_atomic` for
  a file the user named (``--output``, settings files). Either renames, when asked, only
  while the target is still what its caller read (:class:`TargetChanged` otherwise:
  ``hook install``'s read-modify-write of a settings file).
- :func:`write_output`: an output path the user named (``--output``, ``report -o``,
  ``--write-baseline``): atomic for a regular file; a FIFO written only while a reader
  is there; a symbolic link, a directory or another device refused (cli.md).
- :func:`append_summary`: ``$GITHUB_STEP_SUMMARY``: appended, and cut back to its old
  length when the append fails, so the file holds the old content or the new; a FIFO,
  a link or a device as :func:`write_output` says.
- :func:`remove_in`: a file that must go before its partner is rewritten (``fan-in``
  removes a stale kept list before it writes a halting audit).

A failure raises :class:`~qrspi_guard.errors.OutputError` (its one line names the file
and the reason). EINTR is retried.

The fault seam, for tests: every disk step calls :func:`fault` first, and end-to-end
tests set ``QRSPI_GUARD_WRITE_FAULT=ACTION@STEP[:NAME]`` for the console script, in the
grammar of every fault seam (:mod:`qrspi_guard.faults`), a target's base name after a
colon (steps ``create``, ``write``, ``sync``, ``rename``, ``dirsync``, ``append``,
``unlink``; ACTION ``kill``, ``stop``, ``enospc``, ``erofs``, ``eacces``, ``eintr``,
``eio``; the fault fires once in a process, at the first matching step).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from functools import partial
from typing import TypeVar

from qrspi_guard.errors import OutputError
from qrspi_guard.faults import EnvFault
from qrspi_guard.parse.nofollow import Dir
from qrspi_guard.textsafe import one_line

ENV = "QRSPI_GUARD_WRITE_FAULT"
TEMP_PREFIX = ".guard-"
TEMP_SUFFIX = ".tmp"
_SEAM = EnvFault(ENV, ":")
#: how long a step summary FIFO may leave a write unread before the append gives up
SUMMARY_WAIT = 10.0
T = TypeVar("T")


def fault(step: str, path: str) -> None:
    """The fault seam: raise or die here when ``QRSPI_GUARD_WRITE_FAULT`` says so."""
    _SEAM(step, os.path.basename(path))


def _retrying(step: str, path: str, call: Callable[[], T]) -> T:
    """Run one disk step; an EINTR (a signal mid-call) is retried, a few times."""
    for attempt in range(5):
        try:
            fault(step, path)
            return call()
        except InterruptedError:
            if attempt == 4:
                raise
    raise AssertionError("unreachable")  # pragma: no cover


def _failure(path: str, exc: OSError, what: str = "write") -> OutputError:
    reason = exc.strerror or type(exc).__name__
    return OutputError(f"cannot {what} {one_line(path)}: {reason}; the previous file, if "
                       "any, is unchanged")


def _default_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


class TargetChanged(Exception):
    """:func:`write_in`'s *unchanged* found the target changed since its caller read
    it: nothing was written (the caller reads it again and merges)."""


def write_atomic(path: str, data: bytes, mode: int | None = None,
                 unchanged: Callable[[Dir, str], bool] | None = None) -> None:
    """Write *data* to *path* atomically (see the module docstring). *path*'s directory
    is opened as named (``--output``, a settings file: the user's own links are
    followed); the write itself is :func:`write_in` that directory. Raises OSError
    (or :class:`TargetChanged`); the target is left as it was and no temp file stays
    behind."""
    with Dir.named(os.path.dirname(path)) as d:
        write_in(d, os.path.basename(path), data, mode, shown=path, unchanged=unchanged)


def write_round_file(path: str, data: bytes, mode: int | None = None) -> None:
    """:func:`write_atomic` for a file of a run's `reviews/` tree (a status file beside
    a round): its directories are opened without following links
    (:func:`qrspi_guard.parse.nofollow.open_round_dir`), so a step directory swapped for
    a link is refused (``ELOOP``), never written through. Raises OSError."""
    with Dir.round_path(os.path.dirname(path) or os.curdir) as d:
        write_in(d, os.path.basename(path), data, mode, shown=path)


def _create_temp(d: Dir, path: str) -> str:
    """A new hidden temp file in *d*, mode 0600, its name unique to this run (what
    ``tempfile.mkstemp`` does, without importing tempfile or secrets, which cost every
    writing command's start-up a few milliseconds: shutil, bz2, lzma, random)."""
    for _ in range(100):
        name = f"{TEMP_PREFIX}{os.urandom(6).hex()}{TEMP_SUFFIX}"
        try:
            fd = _retrying("create", path, partial(
                d.open, name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        except FileExistsError:
            continue
        os.close(fd)
        return name
    raise FileExistsError(errno.EEXIST, "no free temporary name")  # pragma: no cover


def write_in(d: Dir, name: str, data: bytes, mode: int | None = None,
             shown: str | None = None,
             unchanged: Callable[[Dir, str], bool] | None = None) -> None:
    """Write *data* to *name* in the open directory *d* atomically: a hidden temp file
    created there (never through a link), written, fsynced, renamed over *name*, the
    directory fsynced; every step relative to *d*'s descriptor. *mode*: the new file's
    permissions (default: the old file's, else 0o666 less the umask). *unchanged*
    (*d*, *name*): asked at the last moment, right before the rename, whether the
    target is still what its caller read; False raises :class:`TargetChanged` (a
    read-modify-write that a writer without the caller's lock may race). Raises
    OSError; the target is left as it was and no temp file stays behind."""
    path = shown or d.join(name)
    if mode is None:
        try:
            st = d.lstat(name)
            mode = _default_mode() if stat.S_ISLNK(st.st_mode) else stat.S_IMODE(st.st_mode)
        except OSError:
            mode = _default_mode()
    tmp = _create_temp(d, path)
    try:
        fd = d.open(tmp, os.O_WRONLY)
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), mode)
            view = memoryview(data)
            while view:
                n = _retrying("write", path, partial(os.write, fh.fileno(), view))
                view = view[n:]
            _retrying("sync", path, lambda: os.fsync(fh.fileno()))
        _retrying("rename", path, partial(_rename, d, tmp, name, unchanged))
    except BaseException:
        try:
            d.unlink(tmp)
        except OSError:
            pass
        raise
    try:
        fault("dirsync", path)
        d.fsync()
    except OSError:
        return


def _rename(d: Dir, tmp: str, name: str,
            unchanged: Callable[[Dir, str], bool] | None) -> None:
    if unchanged is not None and not unchanged(d, name):
        raise TargetChanged(d.join(name))
    d.replace(tmp, name)


def sync_dir(directory: str) -> None:
    """fsync *directory* so a file created or renamed in it survives a power loss (best
    effort: some file systems refuse a directory fsync, and the file is in place either
    way)."""
    try:
        dfd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)


def write_output(path: str, text: str) -> None:
    """An output path the user named (``--output``, ``report -o``,
    ``--write-baseline``), never opened in a way that can block or redirect the write
    (cli.md "Files the guard reads and writes"): absent or a regular file, replaced
    atomically; a FIFO, written only while a reader is there (:func:`_stream`); a
    symbolic link (dangling or not), a directory or another device, refused. Raises
    :class:`OutputError` (one line: exit 2)."""
    data = text.encode("utf-8", "surrogateescape")
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise _failure(path, exc) from None
    if st is not None and stat.S_ISFIFO(st.st_mode):
        _stream(path, data, os.O_WRONLY, "write")
        return
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise _refused(path, st.st_mode, "write")
    try:
        write_atomic(path, data)  # a link swapped in meanwhile is replaced, not followed
    except OSError as exc:
        raise _failure(path, exc) from None


def append_summary(path: str, text: str) -> None:
    """Append *text* to the step summary file at *path* (created when missing); on
    failure a regular file is cut back to its old length. A FIFO is written only while
    a reader is there, a link, a directory or a device refused, as
    :func:`write_output`. Raises :class:`OutputError`."""
    _stream(path, text.encode("utf-8", "surrogateescape"),
            os.O_WRONLY | os.O_APPEND | os.O_CREAT, "append to")


def _refused(path: str, mode: int, what: str) -> OutputError:
    kind = ("a symbolic link (never followed; name the file itself)" if stat.S_ISLNK(mode)
            else "a directory" if stat.S_ISDIR(mode)
            else "a device, not a regular file or a FIFO")
    return OutputError(f"cannot {what} {one_line(path)}: it is {kind}")


def _stream(path: str, data: bytes, flags: int, what: str) -> None:
    """*data* written to the file or FIFO at *path*, opened without blocking and
    without following a link: a FIFO with no reader is refused at once (``ENXIO``), one
    whose reader stops reading within :data:`SUMMARY_WAIT`; a regular file that a write
    fails on is cut back to its old length. Raises :class:`OutputError`."""
    try:
        fd = os.open(path, flags | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)
                     | getattr(os, "O_CLOEXEC", 0), _default_mode())
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise OutputError(f"cannot {what} {one_line(path)}: a FIFO that nobody reads; "
                              "start its reader first") from None
        if exc.errno == errno.ELOOP:
            raise _refused(path, stat.S_IFLNK, what) from None
        raise _failure(path, exc, what) from None
    try:
        st = os.fstat(fd)
        fifo = stat.S_ISFIFO(st.st_mode)
        if not (fifo or stat.S_ISREG(st.st_mode)):
            raise _refused(path, st.st_mode, what)
        if not fifo:
            os.set_blocking(fd, True)
        try:
            view = memoryview(data)
            while view:
                if fifo and not _writable(fd, SUMMARY_WAIT):
                    raise OSError(errno.EAGAIN, f"nobody read it for {SUMMARY_WAIT:g} s")
                try:
                    n = _retrying("append", path, partial(os.write, fd, view))
                except BlockingIOError:
                    continue
                view = view[n:]
        except OSError as exc:
            if not fifo:
                try:
                    os.ftruncate(fd, st.st_size)
                except OSError:
                    pass
            raise _failure(path, exc, what) from None
    finally:
        os.close(fd)


def _writable(fd: int, timeout: float) -> bool:
    import select

    try:
        return bool(select.select([], [fd], [], timeout)[1])
    except InterruptedError:
        return True


def remove_in(d: Dir, name: str) -> None:
    """Remove *name* from the open directory *d* if it is there (a missing file is
    fine). Raises OSError."""
    try:
        _retrying("unlink", d.join(name), partial(d.unlink, name))
    except FileNotFoundError:
        return


def size_of(path: str) -> int:
    """The current size of *path* (0 when it cannot be read)."""
    try:
        return os.stat(path).st_size
    except OSError:
        return 0
