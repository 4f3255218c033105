"""Reading findings.json: the verdict's only I/O (read-only, bounded, never a FIFO), and
:func:`review_path`, which reads and then hands the bytes to the pure rules."""

from __future__ import annotations

import os
import stat

from qrspi_guard.verdict.model import MAX_BYTES, FindingsUnreadable, VerdictResult
from qrspi_guard.verdict.review import blocked, evaluate, unreadable_message


def read_findings(path: str, max_bytes: int = MAX_BYTES) -> bytes | None:
    """Read the findings file: its bytes, or ``None`` when nothing is at *path*.

    Reads at most ``max_bytes + 1`` bytes (so an oversized file is detected without
    reading it whole). Raises :class:`FindingsUnreadable` for a directory, a FIFO or
    device, or an OS error. Never writes.
    """
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (OSError, ValueError) as exc:  # ValueError: embedded NUL in the path
        raise FindingsUnreadable(_os_reason(exc)) from None
    _require_regular(st.st_mode)  # a FIFO or device is never opened
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise FindingsUnreadable(_os_reason(exc)) from None
    try:
        with os.fdopen(fd, "rb") as fh:
            _require_regular(os.fstat(fh.fileno()).st_mode)  # swapped since the stat?
            return fh.read(max_bytes + 1)
    except OSError as exc:
        raise FindingsUnreadable(_os_reason(exc)) from None


def _require_regular(mode: int) -> None:
    if stat.S_ISDIR(mode):
        raise FindingsUnreadable("it is a directory")
    if not stat.S_ISREG(mode):
        raise FindingsUnreadable("it is not a regular file")


def _os_reason(exc: BaseException) -> str:
    if isinstance(exc, PermissionError):
        return "permission denied"
    if isinstance(exc, ValueError):
        return "invalid path"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.lower()
    return type(exc).__name__


def review_path(path: str, max_bytes: int = MAX_BYTES) -> VerdictResult:
    """Read and review the findings file at *path*. Read-only; never raises."""
    try:
        data = read_findings(path, max_bytes)
    except FindingsUnreadable as exc:
        return blocked(path, unreadable_message(path, exc.reason))
    return evaluate(path, data, max_bytes)
