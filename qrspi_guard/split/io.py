"""Carry out a :class:`~qrspi_guard.split.plan.SplitPlan`: old state or new, never a mix.

The caller holds the round's lock (:mod:`.lock`) and has repaired any earlier
interrupted split (:mod:`.recover`). Every step is relative to the round directory's
descriptor, opened without following links (:class:`~qrspi_guard.parse.nofollow.Dir`).
Every file made on the way has a reserved hidden name (:mod:`.residue`), so whatever
state a ``kill -9`` leaves is either the old one, the new one, or a round that
``check`` reports as `split_incomplete`.

1. Each new file is written to ``.qrspi-split.<id>.new.<name>``, fsynced; the directory
   is fsynced.
2. The intent (what the round must hold once done) is written to
   ``.qrspi-split.<id>.intent-tmp``, fsynced, and renamed to ``.qrspi-split.<id>.intent``.
   That rename is the **commit point**.
3. The new files are renamed into place; the tag's earlier files that the new attempt
   does not overwrite (``--replace``) are unlinked; the directory is fsynced.
4. The intent is unlinked and the directory fsynced: the round holds no residue.

A failure before the commit point undoes steps 1-2 (the round is exactly as it was);
one after it is retried at once, and if the retry fails too the round stays
`split_incomplete` until the next split completes it. The next split rolls an
interrupted attempt the same way: back before the commit point, forward after it.
"""

from __future__ import annotations

import os
import secrets
import stat

from qrspi_guard.parse.nofollow import Dir
from qrspi_guard.split.errors import SplitIOError
from qrspi_guard.split.faults import Fault, no_fault
from qrspi_guard.split.plan import SplitPlan
from qrspi_guard.split.recover import complete, opened, reason
from qrspi_guard.split.residue import Intent, intent_name, intent_tmp_name, new_name

__all__ = ["SplitIOError", "execute"]

_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL


def _write_new(d: Dir, name: str, data: bytes, created: list[str]) -> None:
    """Create *name* (never overwriting, never through a link), write *data*, fsync
    it, mode 0644."""
    fd = d.open(name, _CREATE, 0o644)
    created.append(name)
    try:
        os.fchmod(fd, 0o644)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)


def _undo(d: Dir, created: list[str]) -> bool:
    """Remove what an uncommitted attempt made; True when all of it is gone."""
    ok = True
    for name in reversed(created):
        try:
            d.unlink(name)
        except FileNotFoundError:
            pass
        except OSError:
            ok = False
    return ok


def _where(step: str, name: str) -> str:
    return f" ({step} {name})" if name else f" ({step})"


def execute(plan: SplitPlan, fault: Fault | None = None, into: Dir | None = None
            ) -> list[str]:
    """Write the plan's files and remove its removals as one step; returns warnings
    (a step after the commit point that failed once and succeeded on retry). *into*:
    the round directory, open (else ``plan.round_dir`` is opened without following
    links); every step is relative to its descriptor. Raises :class:`SplitIOError`
    when the round is not in the new state."""
    fault = fault or no_fault
    try:
        with opened(into or plan.round_dir) as d:
            return _execute(plan, fault, d)
    except SplitIOError:
        raise
    except OSError as exc:
        raise SplitIOError(f"could not write the files (open): {reason(exc)}; nothing was "
                           "changed", True) from exc


def _execute(plan: SplitPlan, fault: Fault, d: Dir) -> list[str]:
    attempt = secrets.token_hex(6)
    intent = Intent(plan.tag, tuple(w.name for w in plan.writes), tuple(plan.removals))
    created: list[str] = []
    step, name = "prepare", ""
    try:
        for name in plan.removals:
            if stat.S_ISDIR(d.lstat(name).st_mode):
                raise IsADirectoryError(0, "it is a directory, not a file it can replace")
        for write in plan.writes:
            step, name = "write", write.name
            fault(step, name)
            _write_new(d, new_name(attempt, write.name), write.data, created)
        step, name = "sync-new", ""
        fault(step, name)
        d.fsync()
        step = "intent"
        fault(step, name)
        _write_new(d, intent_tmp_name(attempt), intent.encode(), created)
        step = "commit"
        fault(step, name)
        d.rename(intent_tmp_name(attempt), intent_name(attempt))
    except BaseException as exc:
        restored = _undo(d, created)
        message = f"could not write the files{_where(step, name)}: {reason(exc)}; "
        message += ("nothing was changed" if restored else
                    "its hidden files could not all be removed (split_incomplete): the "
                    "next split into this round removes them")
        if isinstance(exc, Exception):
            raise SplitIOError(message, restored) from exc
        raise  # KeyboardInterrupt / SystemExit: undone, then propagated
    return _finish(d, attempt, intent, fault)


def _finish(d: Dir, attempt: str, intent: Intent, fault: Fault) -> list[str]:
    """Steps 3-4, after the commit point: done, or retried once, or left for the next
    split (the round then reports `split_incomplete`)."""
    try:
        complete(d, attempt, intent, fault)
        return []
    except BaseException as exc:
        first = exc
    try:
        complete(d, attempt, intent, fault)
    except Exception as exc:
        raise SplitIOError(
            f"could not finish writing the files after the commit point: {reason(first)}; "
            f"then {reason(exc)}; the round holds an interrupted split (split_incomplete) "
            "that the next split into it completes", restored=False) from exc
    if not isinstance(first, Exception):
        raise first  # an interrupt: the files are complete, then it propagates
    return [f"a step after the commit point failed ({reason(first)}) and succeeded on retry"]
