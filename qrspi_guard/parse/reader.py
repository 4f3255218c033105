"""Reading a round directory's entries from disk, safely.

Entries are opened relative to the round directory's descriptor, never following a
symbolic link and never blocking on a FIFO; at most 1 MiB + 1 byte is read
(:data:`qrspi_guard.parse.capped.FILE_CAP`, the one cap).
"""

from __future__ import annotations

import os
import stat
from typing import NamedTuple

from qrspi_guard.parse.capped import FILE_CAP as MAX_BYTES
from qrspi_guard.parse.capped import read_prefix
from qrspi_guard.records import record

_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) \
    | getattr(os, "O_CLOEXEC", 0)


class Entry(NamedTuple):
    """One directory entry (a tuple: listing a round of 100 files stays cheap)."""

    name: str
    is_symlink: bool
    is_file: bool
    is_dir: bool


@record(frozen=True)
class ReadFailure:
    message: str


def list_round(round_dir: str | int) -> list[Entry] | ReadFailure:
    """The entries of a round directory (a path, or an open directory's descriptor),
    sorted by name."""
    try:
        with os.scandir(round_dir) as it:
            entries = []
            for e in it:
                try:
                    link = e.is_symlink()
                    is_file = not link and e.is_file(follow_symlinks=False)
                    is_dir = not link and e.is_dir(follow_symlinks=False)
                    entries.append(Entry(e.name, link, is_file, is_dir))
                except OSError:
                    entries.append(Entry(e.name, False, False, False))
    except OSError as exc:
        return ReadFailure(f"cannot list directory: {exc.strerror or exc}")
    entries.sort(key=lambda e: e.name)
    return entries


def read_bytes(path: str, dir_fd: int | None = None) -> bytes | ReadFailure:
    """A regular file's bytes (at most MAX_BYTES + 1), or why it cannot be read."""
    try:
        fd = os.open(path, _FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        return ReadFailure(f"cannot be read: {exc.strerror or exc}")
    try:
        st = os.fstat(fd)
        if st.st_mode & 0o170000 != stat.S_IFREG:
            return ReadFailure("cannot be read: not a regular file")
        first = b""
        if st.st_size < MAX_BYTES:
            # One read of size + 1 bytes: getting exactly the size is the whole file.
            first = os.read(fd, st.st_size + 1)
            if len(first) == st.st_size:
                return first
        return _read_rest(fd, first)
    except OSError as exc:
        return ReadFailure(f"cannot be read: {exc.strerror or exc}")
    finally:
        os.close(fd)


_CHUNK = 1 << 16


def _read_rest(fd: int, first: bytes) -> bytes:
    """*first* and what follows it, up to MAX_BYTES + 1 bytes in all."""
    return first + read_prefix(fd, MAX_BYTES - len(first))


def read_listed_file(name: str, dir_fd: int) -> bytes | ReadFailure:
    """:func:`read_bytes` for an entry that the directory listing reports as a regular
    file: the same bytes, without the ``fstat`` (a third of the system time per file).
    If the entry changed since it was listed, ``O_NOFOLLOW`` and ``O_NONBLOCK`` still
    hold and at most MAX_BYTES + 1 bytes are read."""
    try:
        fd = os.open(name, _FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        return ReadFailure(f"cannot be read: {exc.strerror or exc}")
    try:
        first = os.read(fd, _CHUNK)
        if len(first) < _CHUNK:  # a regular file's short read is its end
            return first
        return _read_rest(fd, first)
    except OSError as exc:
        return ReadFailure(f"cannot be read: {exc.strerror or exc}")
    finally:
        os.close(fd)
