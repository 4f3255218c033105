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

from collections.abc import Iterator
from contextlib import contextmanager

from qrspi_guard.parse.nofollow import Dir
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


@contextmanager
def opened(directory: str | Dir) -> Iterator[Dir]:
    """*directory* as an open :class:`Dir` (a path is opened without following links,
    and closed after). Raises OSError."""
    if isinstance(directory, Dir):
        yield directory
        return
    with Dir.round_path(directory) as d:
        yield d


def reason(exc: BaseException) -> str:
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def complete(d: Dir, attempt: str, intent: Intent, fault: Fault,
             recovering: bool = False) -> None:
    """Carry a committed attempt's intent out; safe to repeat after any interruption.
    Every name is resolved relative to *d*'s descriptor."""
    p = "recover-" if recovering else ""
    fault(p + "sync-intent", "")
    d.fsync()
    for name in intent.writes:
        tmp = new_name(attempt, name)
        if d.exists(tmp):  # else placed already
            fault(p + "place", name)
            d.replace(tmp, name)
    for name in intent.removals:
        if name not in intent.writes and d.exists(name):
            fault(p + "remove", name)
            d.unlink(name)
    fault(p + "sync", "")
    d.fsync()
    fault(p + "finish", "")
    d.unlink(intent_name(attempt))
    d.fsync()


def _read_intent(d: Dir, attempt: str) -> Intent:
    directory = d.path
    data = read_bytes(intent_name(attempt), dir_fd=d.fd)
    intent = None if isinstance(data, ReadFailure) else Intent.decode(data)
    if intent is None:
        raise RecoveryError(
            f"cannot complete the interrupted split in {one_line(directory)}: its commit "
            f"record {intent_name(attempt)} is unreadable or damaged; inspect the round and "
            "remove the .qrspi-split.* files by hand")
    return intent


def _drop(d: Dir, names: list[str], fault: Fault) -> None:
    for name in names:
        fault("recover-drop", name)
        try:
            d.unlink(name)
        except FileNotFoundError:
            pass
    fault("recover-finish", "")
    d.fsync()


def _full(attempt: str, part: ResidueName) -> str:
    if part.role == "new":
        return new_name(attempt, part.target or "")
    return f".qrspi-split.{attempt}.{part.role}"


def recover(directory: str | Dir, fault: Fault | None = None) -> list[str]:
    """Roll every interrupted attempt in *directory* back or forward; returns one line
    per attempt saying which. Raises :class:`RecoveryError` when it cannot."""
    fault = fault or no_fault
    shown = directory.path if isinstance(directory, Dir) else directory
    try:
        with opened(directory) as d:
            return _recover(d, fault)
    except OSError as exc:
        raise RecoveryError(f"cannot repair the interrupted split in {one_line(shown)}: "
                            f"{reason(exc)}; the round still reports split_incomplete") from exc


def _recover(d: Dir, fault: Fault) -> list[str]:
    directory = d.path
    said = []
    attempts: dict[str, list[ResidueName]] = {}
    for name in residue_in(d):
        part = parse_residue(name)
        if part is None:
            raise RecoveryError(
                f"{one_line(directory)} holds {one_line(name)}, which is in split's "
                "reserved name pattern but is not a file split writes; move it away "
                "by hand")
        attempts.setdefault(part.attempt, []).append(part)
    for attempt, parts in sorted(attempts.items()):
        if any(p.role == "intent" for p in parts):
            intent = _read_intent(d, attempt)
            complete(d, attempt, intent, fault, recovering=True)
            stray = [_full(attempt, p) for p in parts
                     if p.role == "intent-tmp" or (p.role == "new"
                                                   and p.target not in intent.writes)]
            if stray:
                _drop(d, stray, fault)
            said.append(f"completed an interrupted split of {intent.tag} (it had "
                        f"committed): {len(intent.writes)} file(s) in place")
        else:
            _drop(d, [_full(attempt, p) for p in parts], fault)
            said.append(f"rolled back an interrupted split (it had not committed): "
                        f"removed {len(parts)} hidden file(s)")
    return said
