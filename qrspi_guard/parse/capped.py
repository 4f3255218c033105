"""Every untrusted byte source read with a cap: one definition of the cap, one reader.

A finding, a config.md, a project configuration file, a config.md blob from git, the
hook's payload and standard input are all read here, through :func:`read_capped` (a
descriptor: a file, a pipe, a FIFO, a terminal) or :func:`read_stream` (a binary stream),
and never hold more than their cap + 1 bytes, however much the source has: ``/dev/zero``,
an endless pipe or a 700 MB blob is "over the cap", never memory exhaustion.
:func:`read_regular` is the one way a file named by a path is read: only a regular
file, opened without waiting (a FIFO or a device is refused, never read from).
:func:`skip` discards a known number of bytes of a stream in bounded chunks (what
follows an oversized object in a ``git cat-file --batch`` stream).

:data:`FILE_CAP` is the one size limit of a file the guard parses (contract
``max_bytes``: over it, `file_too_large`); :data:`STREAM_CAP` the one limit of a stream
that carries several such files (split's stdout, the hook's JSON payload, standard
input with ``--stdin-filename``).
"""

from __future__ import annotations

import os
import stat

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover  (typing costs the hook's no-op path milliseconds)
    from collections.abc import Callable
    from typing import IO, BinaryIO

#: a file the guard parses (a finding, a sidecar, config.md, a settings file, a blob)
FILE_CAP = 1024 * 1024
#: a stream carrying several files, or one escaped in JSON (up to six bytes a byte)
STREAM_CAP = 32 * FILE_CAP
_CHUNK = 1 << 20
#: never wait on a FIFO, never take a terminal as the controlling one, never leak into
#: a child
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) \
    | getattr(os, "O_CLOEXEC", 0)


class Refused(Exception):
    """A file that is there but is not read: not a regular file, or larger than the cap.
    ``str()`` is one line saying which. *st*: what the file was found to be; *data*:
    for one over the cap, its first cap + 1 bytes (what :func:`read_prefix` gives, for
    a caller that judges them itself), else empty."""

    def __init__(self, why: str, st: os.stat_result, data: bytes = b"") -> None:
        super().__init__(why)
        self.st = st
        self.data = data

    @property
    def too_large(self) -> bool:
        return bool(self.data)  # cap + 1 bytes, never none, when over the cap

    @property
    def is_dir(self) -> bool:
        return stat.S_ISDIR(self.st.st_mode)


def read_regular(path: str, cap: int = FILE_CAP, *, follow: bool = True,
                 dir_fd: int | None = None) -> tuple[bytes, os.stat_result]:
    """The bytes of the regular file *path* (relative to *dir_fd* when given; at most
    *cap* of them) and its ``fstat``.

    It is looked at before it is opened, so a FIFO or a device is never opened; a file
    swapped in between is still refused after the open, which never waits. *follow*:
    follow a symbolic link at the last component; else a link is ``ELOOP``. Raises
    OSError (FileNotFoundError when there is nothing at *path*) or :class:`Refused`
    (not a regular file; more than *cap* bytes)."""
    st = os.stat(path, dir_fd=dir_fd, follow_symlinks=follow)
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):  # a link: ELOOP below
        raise Refused("not a regular file", st)
    fd = os.open(path, _READ_FLAGS | (0 if follow else getattr(os, "O_NOFOLLOW", 0)),
                 dir_fd=dir_fd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Refused("not a regular file", st)
        data = read_prefix(fd, cap)
    finally:
        os.close(fd)
    if len(data) > cap:
        raise Refused(f"larger than {_size(cap)}", st, data)
    return data, st


def _size(cap: int) -> str:
    """A cap as a user reads it: ``1 MiB`` from one MiB up, else ``N bytes``."""
    return f"{cap >> 20} MiB" if cap >= 1 << 20 else f"{cap} bytes"


def read_capped(fd: int, cap: int = FILE_CAP) -> bytes | None:
    """All of *fd* up to its end, or None once more than *cap* bytes came (then at
    most *cap* + 1 bytes were read). Raises OSError."""
    return _upto(lambda n: os.read(fd, n), cap)


def _upto(read: Callable[[int], bytes], cap: int) -> bytes | None:
    """What *read* gives up to its end, or None past *cap* bytes (the one loop behind
    :func:`read_capped` and :func:`read_stream`)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = read(min(_CHUNK, cap + 1 - size))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        size += len(chunk)
        if size > cap:
            return None


def read_prefix(fd: int, cap: int = FILE_CAP) -> bytes:
    """At most *cap* + 1 bytes of *fd* (a regular file: the whole of it when it is not
    over the cap; longer means over it). Raises OSError."""
    chunks: list[bytes] = []
    remaining = cap + 1
    while remaining > 0:
        chunk = os.read(fd, min(remaining, _CHUNK))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def read_stream(stream: BinaryIO, cap: int = STREAM_CAP) -> bytes | None:
    """:func:`read_capped` for a binary stream (``sys.stdin.buffer``). Raises OSError."""
    return _upto(stream.read, cap)


def skip(stream: IO[bytes], size: int) -> bool:
    """Read past *size* bytes of *stream* in bounded chunks, holding none of them (what
    follows an oversized object in a ``git cat-file --batch`` stream); False when the
    stream ended first. Raises OSError."""
    while size > 0:
        chunk = stream.read(min(size, _CHUNK))
        if not chunk:
            return False
        size -= len(chunk)
    return True
