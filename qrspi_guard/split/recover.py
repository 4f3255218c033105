"""Repairing a round that an interrupted split left behind (its reserved residue).

The next ``split`` into a round calls :func:`recover` under the round's lock, before
anything else. Each interrupted attempt is rolled **back** when it had not committed
(no ``.intent``: its hidden new files are removed, and the round is as it was before
it) and **forward** when it had (the intent is carried out: the new files renamed into
place, the tag's earlier files removed, then the intent removed). Either way the round
ends in a state the attempt's own commit decided, and every step can be repeated, so a
recovery that is itself interrupted is finished by the next one.
"""

from __future__ import annotations

import os

from qrspi_guard.parse.reader import ReadFailure, read_bytes
from qrspi_guard.split.errors import RecoveryError
from qrspi_guard.split.faults import Fault, no_fault
from qrspi_guard.split.residue import (
    Intent,
    ResidueName,
    intent_name,
    new_name,
    parse_residue,
    residue_in,
)
from qrspi_guard.textsafe import one_line

_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)


def reason(exc: BaseException) -> str:
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def fsync_dir(path: str) -> None:
    fd = os.open(path, _DIR_FLAGS)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def complete(directory: str, attempt: str, intent: Intent, fault: Fault,
             recovering: bool = False) -> None:
    """Carry a committed attempt's intent out; safe to repeat after any interruption."""
    p = "recover-" if recovering else ""
    fault(p + "sync-intent", "")
    fsync_dir(directory)
    for name in intent.writes:
        tmp = os.path.join(directory, new_name(attempt, name))
        if os.path.lexists(tmp):  # else placed already
            fault(p + "place", name)
            os.replace(tmp, os.path.join(directory, name))
    for name in intent.removals:
        path = os.path.join(directory, name)
        if name not in intent.writes and os.path.lexists(path):
            fault(p + "remove", name)
            os.unlink(path)
    fault(p + "sync", "")
    fsync_dir(directory)
    fault(p + "finish", "")
    os.unlink(os.path.join(directory, intent_name(attempt)))
    fsync_dir(directory)


def _read_intent(directory: str, attempt: str) -> Intent:
    data = read_bytes(os.path.join(directory, intent_name(attempt)))
    intent = None if isinstance(data, ReadFailure) else Intent.decode(data)
    if intent is None:
        raise RecoveryError(
            f"cannot complete the interrupted split in {one_line(directory)}: its commit "
            f"record {intent_name(attempt)} is unreadable or damaged; inspect the round and "
            "remove the .qrspi-split.* files by hand")
    return intent


def _drop(directory: str, names: list[str], fault: Fault) -> None:
    for name in names:
        fault("recover-drop", name)
        try:
            os.unlink(os.path.join(directory, name))
        except FileNotFoundError:
            pass
    fault("recover-finish", "")
    fsync_dir(directory)


def _full(attempt: str, part: ResidueName) -> str:
    if part.role == "new":
        return new_name(attempt, part.target or "")
    return f".qrspi-split.{attempt}.{part.role}"


def recover(directory: str, fault: Fault | None = None) -> list[str]:
    """Roll every interrupted attempt in *directory* back or forward; returns one line
    per attempt saying which. Raises :class:`RecoveryError` when it cannot."""
    fault = fault or no_fault
    said = []
    try:
        attempts: dict[str, list[ResidueName]] = {}
        for name in residue_in(directory):
            part = parse_residue(name)
            if part is None:
                raise RecoveryError(
                    f"{one_line(directory)} holds {one_line(name)}, which is in split's "
                    "reserved name pattern but is not a file split writes; move it away "
                    "by hand")
            attempts.setdefault(part.attempt, []).append(part)
        for attempt, parts in sorted(attempts.items()):
            if any(p.role == "intent" for p in parts):
                intent = _read_intent(directory, attempt)
                complete(directory, attempt, intent, fault, recovering=True)
                stray = [_full(attempt, p) for p in parts
                         if p.role == "intent-tmp" or (p.role == "new"
                                                       and p.target not in intent.writes)]
                if stray:
                    _drop(directory, stray, fault)
                said.append(f"completed an interrupted split of {intent.tag} (it had "
                            f"committed): {len(intent.writes)} file(s) in place")
            else:
                _drop(directory, [_full(attempt, p) for p in parts], fault)
                said.append(f"rolled back an interrupted split (it had not committed): "
                            f"removed {len(parts)} hidden file(s)")
    except OSError as exc:
        raise RecoveryError(f"cannot repair the interrupted split in {one_line(directory)}: "
                            f"{reason(exc)}; the round still reports split_incomplete") from exc
    return said
