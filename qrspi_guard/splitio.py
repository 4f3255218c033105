"""Carry out a :class:`~qrspi_guard.split.SplitPlan`, all or nothing (split.md).

1. Every new file is written to a hidden temp name in the round directory (names that
   start with `.` are ignored by ``check`` and ``watch``), flushed and fsynced.
2. With ``--replace``, the tag's earlier files are renamed aside to hidden backup names
   (reversible, unlike an unlink).
3. The temp files are renamed into place, in numbering order, and the directory is
   fsynced. This is the commit point.
4. The backups are deleted.

Any failure (or interrupt) before the commit point undoes what was done: new names are
unlinked, backups renamed back, temps removed, so the directory is exactly as it was.

*fault* is a test seam: it is called as ``fault(step, name)`` before every disk step
(``write``, ``aside``, ``rename``, ``sync``) and may raise to simulate a failure there.
"""

from __future__ import annotations

import os
import secrets
import stat
import tempfile
from collections.abc import Callable

from qrspi_guard.split import SplitPlan

Fault = Callable[[str, str], None]


class SplitIOError(Exception):
    """Writing failed; the directory was restored (``restored`` says whether fully)."""

    def __init__(self, message: str, restored: bool = True) -> None:
        super().__init__(message)
        self.restored = restored


def _no_fault(step: str, name: str) -> None:
    return None


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _fsync_dir(path: str) -> None:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def execute(plan: SplitPlan, fault: Fault | None = None) -> list[str]:
    """Write the plan's files and remove its removals as one step; returns the cleanup
    warnings (backups that could not be deleted after the commit). Raises
    :class:`SplitIOError` when nothing was changed because a step failed."""
    fault = fault or _no_fault
    directory = plan.round_dir
    temps: dict[str, str] = {}  # target name -> temp path
    aside: list[tuple[str, str]] = []  # (backup path, original path)
    placed: list[str] = []  # target paths renamed into place
    step, name = "prepare", ""
    try:
        for name in plan.removals:
            mode = os.lstat(os.path.join(directory, name)).st_mode
            if stat.S_ISDIR(mode):
                raise IsADirectoryError(0, "it is a directory, not a file it can replace")
        step = "write"
        for write in plan.writes:
            name = write.name
            fault(step, name)
            fd, tmp = tempfile.mkstemp(prefix=f".{plan.tag}.split-", suffix=".tmp",
                                       dir=directory)
            temps[name] = tmp
            with os.fdopen(fd, "wb") as fh:
                os.fchmod(fh.fileno(), 0o644)
                fh.write(write.data)
                fh.flush()
                os.fsync(fh.fileno())
        step = "aside"
        for name in plan.removals:
            fault(step, name)
            original = os.path.join(directory, name)
            backup = os.path.join(directory, f".{name}.split-old-{secrets.token_hex(6)}")
            os.rename(original, backup)
            aside.append((backup, original))
        step = "rename"
        for write in plan.writes:
            name = write.name
            fault(step, name)
            target = os.path.join(directory, name)
            os.replace(temps[name], target)
            placed.append(target)
            del temps[name]
        step, name = "sync", ""
        fault(step, name)
        _fsync_dir(directory)
    except BaseException as exc:
        restored = _undo(temps, aside, placed)
        where = f" ({step} {name})" if name else f" ({step})"
        message = f"could not write the files{where}: {_reason(exc)}; "
        message += ("nothing was changed" if restored
                    else "the directory could NOT be fully restored; check it by hand")
        if isinstance(exc, Exception):
            raise SplitIOError(message, restored) from exc
        raise  # KeyboardInterrupt / SystemExit: undone, then propagated
    warnings = []
    for backup, original in aside:
        try:
            os.unlink(backup)
        except OSError as exc:
            warnings.append(f"replaced {os.path.basename(original)} but could not delete its "
                            f"hidden backup {os.path.basename(backup)}: {_reason(exc)}")
    return warnings


def _undo(temps: dict[str, str], aside: list[tuple[str, str]], placed: list[str]) -> bool:
    """Put the directory back; True when every step of the undo succeeded."""
    ok = True
    for target in reversed(placed):
        try:
            os.unlink(target)
        except FileNotFoundError:
            pass
        except OSError:
            ok = False
    for backup, original in reversed(aside):
        try:
            os.rename(backup, original)
        except OSError:
            ok = False
    for tmp in temps.values():
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        except OSError:
            ok = False
    return ok
