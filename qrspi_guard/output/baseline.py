"""The baseline: diagnostics a repository accepted when it turned the gate on (cli.md
"Adopting the gate on a repository with old rounds").

A baseline file is JSON, ``{"version": 1, "entries": [...]}``, each entry
``{"cause", "path", "fingerprint"}`` sorted by path, cause, fingerprint. ``path`` is
relative to the repository root (the round directory for a round-level diagnostic) and
``fingerprint`` is :mod:`qrspi_guard.output.fingerprint`'s, the one SARIF carries, so an
entry still matches after its lines move. A diagnostic matches an entry when all three
are equal.

:func:`render` writes today's diagnostics as a baseline; :func:`load` reads one (a
missing file, one that does not parse or one of another version is a
:class:`BaselineError`, exit 2); :func:`apply_baseline` leaves the matching diagnostics
out of a result, for every output and the exit code. Status files are written from the
result before it, so they describe a round as it is. No printing, no click.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from qrspi_guard.contract.diagnostics import Diagnostic
from qrspi_guard.engine.results import CheckResult, RoundResult
from qrspi_guard.errors import GuardError
from qrspi_guard.output.fingerprint import fingerprints, source_root
from qrspi_guard.parse import jsondoc
from qrspi_guard.parse.capped import Refused, read_regular
from qrspi_guard.records import record, replace
from qrspi_guard.textsafe import one_line

VERSION = 1
#: the largest baseline read (an entry is about 150 bytes)
MAX_BYTES = 64 * 1024 * 1024
_KEYS = ("cause", "path", "fingerprint")


class BaselineError(GuardError):
    """A baseline file that is missing, does not parse, or is of another version."""


@record(frozen=True)
class Entry:
    cause: str
    path: str
    fingerprint: str


@record(frozen=True)
class Baseline:
    """A loaded baseline: its entries, and the repository root their paths are under."""

    path: str
    root: str
    entries: frozenset[Entry]


@record(frozen=True)
class Outcome:
    """What applying a baseline left out: ``(N in baseline, M fixed)``."""

    in_baseline: int
    fixed: int

    def note(self) -> str:
        return f"({self.in_baseline} in baseline, {self.fixed} fixed)"


def root_for(baseline_file: str) -> str:
    """The repository root a baseline's paths are relative to: the git top level above
    the file (the file's directory outside git)."""
    return source_root(os.path.dirname(os.path.abspath(baseline_file)))


def entries_of(diags: Iterable[Diagnostic], root: str) -> list[Entry]:
    diags = list(diags)
    return [Entry(d.cause, where, fp)
            for d, (where, fp) in zip(diags, fingerprints(diags, root), strict=True)]


def render(diags: Iterable[Diagnostic], root: str) -> str:
    """The baseline file's text for *diags* (``check --write-baseline``)."""
    entries = sorted(set(entries_of(diags, root)),
                     key=lambda e: (e.path, e.cause, e.fingerprint))
    doc = {"version": VERSION,
           "entries": [{k: getattr(e, k) for k in _KEYS} for e in entries]}
    return jsondoc.dumps(doc, indent=2, ensure_ascii=True) + "\n"


def _read(path: str) -> bytes:
    shown = one_line(path)
    try:
        return read_regular(path, MAX_BYTES)[0]
    except OSError as exc:
        raise BaselineError(f"baseline {shown}: cannot be read: {exc.strerror or exc}") \
            from None
    except Refused as exc:
        if exc.too_large:
            raise BaselineError(f"baseline {shown}: larger than {MAX_BYTES} bytes") from None
        raise BaselineError(f"baseline {shown}: not a regular file") from None


def load(path: str) -> Baseline:
    """The baseline in *path*. Raises :class:`BaselineError` (one line) when it is
    missing, unreadable, not JSON, not of this shape, or of another version."""
    shown = one_line(path)
    data = _read(path)
    try:
        doc = jsondoc.loads(data)
    except jsondoc.JsonError as exc:
        raise BaselineError(f"baseline {shown}: does not parse as JSON: {one_line(str(exc))}") \
            from None
    if not isinstance(doc, dict) or "version" not in doc:
        raise BaselineError(f"baseline {shown}: not a qrspi-guard baseline (no version)")
    if doc["version"] != VERSION or isinstance(doc["version"], bool):
        raise BaselineError(f"baseline {shown}: version {one_line(repr(doc['version']))} "
                            f"is not {VERSION}; write it again with --write-baseline")
    raw = doc.get("entries")
    if not isinstance(raw, list):
        raise BaselineError(f"baseline {shown}: entries must be a list")
    entries = set()
    for i, item in enumerate(raw):
        if not isinstance(item, dict) or not all(isinstance(item.get(k), str) for k in _KEYS):
            raise BaselineError(f"baseline {shown}: entry {i + 1} must have the strings "
                                "cause, path and fingerprint")
        entries.add(Entry(item["cause"], item["path"], item["fingerprint"]))
    return Baseline(path, root_for(path), frozenset(entries))


def _restatus(rr: RoundResult, drop: set[int],
              runs: dict[int, list[Diagnostic]]) -> RoundResult:
    if id(rr.run) not in runs:
        runs[id(rr.run)] = [d for d in rr.run.diagnostics if id(d) not in drop]
    run = replace(rr.run, diagnostics=runs[id(rr.run)])
    kept = replace(rr, diagnostics=[d for d in rr.diagnostics if id(d) not in drop], run=run)
    kept.status = kept.decided()
    return kept


class Scope:
    """What a check looked at, so that an entry it could not have seen is not counted
    as fixed (a pre-commit hook passes the files of one round): the trees of the
    directory arguments, and of each checked round its directory, its side files
    (``round-NN-verified.md``...) and the files beside its run's ``reviews/``."""

    def __init__(self, result: CheckResult, paths: Iterable[str]) -> None:
        self.trees = [os.path.abspath(p) for p in (list(paths) or ["."]) if os.path.isdir(p)]
        self.sides: set[tuple[str, str]] = set()
        self.beside: set[str] = set()
        for rr in result.rounds:
            ref = rr.ref
            self.trees.append(os.path.abspath(ref.round_dir))
            self.sides.add((os.path.abspath(ref.step_dir), os.path.basename(ref.round_dir)))
            if ref.artifact_dir is not None:
                self.beside.add(os.path.abspath(ref.artifact_dir))

    def holds(self, path: str) -> bool:
        if any(path == t or path.startswith(t.rstrip(os.sep) + os.sep) for t in self.trees):
            return True
        directory, name = os.path.split(path)
        if directory in self.beside:
            return True
        return any(directory == d and name.startswith(r) and not name[len(r):][:1].isdigit()
                   for d, r in self.sides)


def apply_baseline(result: CheckResult, baseline: Baseline,
                   scope: Scope | None = None) -> tuple[CheckResult, Outcome]:
    """*result* without the diagnostics that match *baseline*'s entries (rounds'
    statuses recomputed, as the outputs show them), and how many were left out and how
    many entries within *scope* (default: all) no longer occur. Never changes
    *result*."""
    matched: set[Entry] = set()
    drop: set[int] = set()  # result.diagnostics are the very objects its parts hold
    diags = result.diagnostics
    for d, entry in zip(diags, entries_of(diags, baseline.root), strict=True):
        if entry in baseline.entries:
            matched.add(entry)
            drop.add(id(d))
    gone = baseline.entries - matched
    if scope is not None:
        gone = frozenset(e for e in gone
                         if scope.holds(os.path.normpath(os.path.join(baseline.root, e.path))))
    outcome = Outcome(len(drop), len(gone))
    runs: dict[int, list[Diagnostic]] = {}
    filtered = replace(result,
                       outside={i: [d for d in diags if id(d) not in drop]
                                for i, diags in result.outside.items()},
                       rounds=[_restatus(r, drop, runs) for r in result.rounds],
                       baseline=(outcome.in_baseline, outcome.fixed))
    return filtered, outcome
