"""The state of the review rounds a shell call can reach: recorded before the call,
compared after it.

:func:`snapshot` lists each round (and each round below the directories above rounds
the call can reach: a ``reviews`` tree, a step, a task) and records every entry's
``lstat`` (inode, size, modification and change times, mode); :func:`changed`
lists them again after the call and returns the entries new or changed since, whoever
wrote them. A round that appeared during the call is all new. Hidden names are left
out, as ``check`` leaves them out.

Bounded: at most :data:`MAX_ROUNDS` rounds and :data:`MAX_ENTRIES` entries are
recorded, named rounds first, then the newest of each scope; a round past the bounds
is listed as known, and its changes are not judged (``watch`` and ``check`` judge
them). Reads the disk, never follows a link, writes nothing.
"""

from __future__ import annotations

import os

from qrspi_guard.hook.where import round_at

#: at most this many rounds are recorded for one call
MAX_ROUNDS = 64
#: at most this many entries, over all the rounds recorded
MAX_ENTRIES = 8192
#: at most this many directories are listed to find the rounds below the scopes
MAX_LISTINGS = 256
#: at most this many rounds are listed below the scopes
MAX_LISTED = 1024

Record = dict[str, object]
Entries = dict[str, list[int]]


def _entries(round_dir: str, limit: int) -> Entries | None:
    """Every entry of *round_dir* (not hidden) and its lstat; ``{}`` when it is not
    there (yet); None past *limit* entries."""
    out: Entries = {}
    try:
        with os.scandir(round_dir) as it:
            for entry in it:
                if entry.name.startswith("."):
                    continue
                if len(out) >= limit:
                    return None
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                out[entry.name] = [st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns,
                                   st.st_mode]
    except OSError:
        return {}
    return out


def _rounds_below(scopes: list[str]) -> tuple[list[str], bool]:
    """The round directories below *scopes*, newest first within each step, and
    whether they were all listed."""
    found: list[str] = []
    pending = [(scope, 0) for scope in scopes]
    listings = 0
    while pending:
        directory, depth = pending.pop(0)
        listings += 1
        if listings > MAX_LISTINGS:
            return found, False
        rounds: list[tuple[int, str]] = []
        try:
            with os.scandir(directory) as it:
                children = [e for e in it if not e.name.startswith(".")
                            and e.is_dir(follow_symlinks=False)]
        except OSError:
            continue
        for child in sorted(children, key=lambda e: e.name):
            parts = child.path.split(os.sep)
            at = round_at(parts)
            if at is not None and at[0] == len(parts) - 1:
                from qrspi_guard.contract.layout import round_number

                rounds.append((round_number(child.name) or -1, child.path))
            elif at is None and depth < 2:
                pending.append((child.path, depth + 1))
        found.extend(path for _, path in sorted(rounds, key=lambda r: -r[0]))
        if len(found) > MAX_LISTED:
            return found[:MAX_LISTED], False
    return found, True


def snapshot(rounds: list[str], scopes: list[str]) -> Record:
    """The state of *rounds* (named: recorded even when absent) and of the rounds
    below *scopes*, bounded."""
    below, complete = _rounds_below(scopes)
    recorded: dict[str, Entries] = {}
    known: list[str] = []
    total = 0
    for round_dir in dict.fromkeys(rounds + below):
        entries = None
        if len(recorded) < MAX_ROUNDS:
            entries = _entries(round_dir, MAX_ENTRIES - total)
        if entries is None:
            known.append(round_dir)
            continue
        recorded[round_dir] = entries
        total += len(entries)
    return {"rounds": recorded, "known": known, "scopes": scopes, "complete": complete}


def changed(record: Record) -> list[str]:
    """The entries new or changed since *record* was taken (absolute paths), in the
    order of its rounds."""
    recorded = record.get("rounds")
    known = record.get("known")
    scopes = record.get("scopes")
    if not isinstance(recorded, dict) or not isinstance(known, list) \
            or not isinstance(scopes, list):
        return []
    rounds = [r for r in recorded if isinstance(r, str)]
    if record.get("complete") is True and scopes:
        below, _ = _rounds_below([s for s in scopes if isinstance(s, str)])
        rounds += [r for r in below if r not in recorded and r not in known]
    out: list[str] = []
    for round_dir in rounds:
        before = recorded.get(round_dir)
        before = before if isinstance(before, dict) else {}
        now = _entries(round_dir, MAX_ENTRIES)
        for name, st in sorted((now or {}).items()):
            if before.get(name) != st:
                out.append(os.path.join(round_dir, name))
    return out
