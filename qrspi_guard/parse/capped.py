"""Every untrusted byte source read with a cap: one definition of the cap, one reader.

A finding, a config.md, a project configuration file, a config.md blob from git, the
hook's payload and standard input are all read here, through :func:`read_capped` (a
descriptor: a file, a pipe, a FIFO, a terminal) or :func:`read_stream` (a binary stream),
and never hold more than their cap + 1 bytes, however much the source has: ``/dev/zero``,
an endless pipe or a 700 MB blob is "over the cap", never memory exhaustion.
:func:`skip` discards a known number of bytes of a stream in bounded chunks (what
follows an oversized object in a ``git cat-file --batch`` stream).

:data:`FILE_CAP` is the one size limit of a file the guard parses (contract
``max_bytes``: over it, `file_too_large`); :data:`STREAM_CAP` the one limit of a stream
that carries several such files (split's stdout, the hook's JSON payload, standard
input with ``--stdin-filename``).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover  (typing costs the hook's no-op path milliseconds)
    from collections.abc import Callable
    from typing import IO, BinaryIO

#: a file the guard parses (a finding, a sidecar, config.md, a settings file, a blob)
FILE_CAP = 1024 * 1024
#: a stream carrying several files, or one escaped in JSON (up to six bytes a byte)
STREAM_CAP = 32 * FILE_CAP
_CHUNK = 1 << 20


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
