"""Reading findings.json: the verdict's only I/O (read-only, bounded, never a FIFO), and
:func:`review_path`, which reads and then hands the bytes to the pure rules."""

from __future__ import annotations

from qrspi_guard.parse.capped import Refused, read_regular
from qrspi_guard.verdict.model import MAX_BYTES, FindingsUnreadable, VerdictResult
from qrspi_guard.verdict.review import blocked, evaluate, unreadable_message


def read_findings(path: str, max_bytes: int = MAX_BYTES) -> bytes | None:
    """Read the findings file: its bytes, or ``None`` when nothing is at *path*.

    Reads at most ``max_bytes + 1`` bytes (so an oversized file is detected without
    reading it whole), through :func:`~qrspi_guard.parse.capped.read_regular`. Raises
    :class:`FindingsUnreadable` for a directory, a FIFO or device (never opened), or an
    OS error. Never writes.
    """
    try:
        return read_regular(path, max_bytes)[0]
    except (FileNotFoundError, NotADirectoryError):
        return None
    except Refused as exc:
        if exc.too_large:
            return exc.data  # judged by the rules: "too large"
        raise FindingsUnreadable("it is a directory" if exc.is_dir
                                 else "it is not a regular file") from None
    except (OSError, ValueError) as exc:  # ValueError: embedded NUL in the path
        raise FindingsUnreadable(_os_reason(exc)) from None


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
