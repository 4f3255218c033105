"""One round's per-file verdicts, each made once per version of a settled file.

A cache, not a judge: each entry is judged by :func:`qrspi_guard.engine.judge_entry`,
as ``check`` judges it, and its verdict is kept by its ``lstat`` signature, so a file
is parsed once per version however many events it causes. A round is judged by the
one judge (:meth:`qrspi_guard.judge.Judge.judge`), whose entry loop asks this cache for
each entry (:class:`qrspi_guard.engine.entries.EntryCache`) and leaves out files not
settled yet: a round that cannot be listed is ``unreadable_dir``, as in ``check``.
"""

from __future__ import annotations

import os
import stat

from qrspi_guard.contract.diagnostics import Diagnostic
from qrspi_guard.contract.generations import Generation
from qrspi_guard.contract.layout import (
    FileName,
    RoundRef,
    classify,
    is_split_residue,
    is_watch_temp,
)
from qrspi_guard.contract.runconfig import Overrides, RunConfig
from qrspi_guard.engine.entries import Context, RoundFiles, judge_entry, place_of
from qrspi_guard.engine.generation import evidence
from qrspi_guard.engine.results import RoundResult
from qrspi_guard.engine.roundverdict import evaluate_round
from qrspi_guard.parse.reader import ReadFailure, read_bytes
from qrspi_guard.records import field, record
from qrspi_guard.rules.facts import FileReport, Place

Sig = tuple[int, int, int, int]  #: (inode, size, mtime_ns, ctime_ns)


def signature(st: os.stat_result) -> Sig:
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def ignored(name: str) -> bool:
    """Names watch never judges: hidden, editor and temp names (round-contract §2)."""
    return is_watch_temp(name)


@record
class FileVerdict:
    """One entry's part of the round: its file report (if any) and entry diagnostics."""

    sig: Sig | None
    report: FileReport | None = None
    diags: list[Diagnostic] = field(default_factory=list)
    #: the round's generation (and whether its fan-in recount reads fields) it was
    #: judged under: a file is judged again when that changes
    under: tuple[str, bool] | None = None


class RoundJudge:
    """Cached per-entry verdicts of one round directory."""

    def __init__(self, ref: RoundRef, ctx: Context | None = None) -> None:
        self.ref = ref
        self.ctx = ctx or Context()
        self.verdicts: dict[str, FileVerdict] = {}
        self.parses = 0  #: files read and judged (for tests and benchmarks)
        self.residue: list[str] = []  #: split's reserved names at the last listing
        #: the round's own generation evidence at the last evaluation (rules 1-2; None:
        #: none, its generation is its run's majority)
        self.evidence: str | None = None
        self._exclude: set[str] = set()
        #: entries on disk never judged, found by the last judgement
        self.unseen: list[str] = []

    def place(self) -> tuple[Place, set[str], frozenset[str], Generation]:
        """How the round's files are judged now: its generation (from every entry name,
        hidden ones included, and the files beside it) and its entries and side files."""
        try:
            names = set(os.listdir(self.ref.round_dir))
        except OSError:
            names = set()
        beside = self.ctx.sides.beside(self.ref.step_dir, self.ref.round)
        assert self.ctx.resolver is not None
        gen = self.ctx.resolver.of(self.ref, names, beside)
        fanin = bool(gen.outputs_inside & names)
        return place_of(self.ref, gen, fanin), names, beside, gen

    def _path(self, name: str) -> str:
        return os.path.join(self.ref.round_dir, name)

    def judge(self, name: str) -> bool:
        """Judge entry *name* as it is on disk now; False when nothing changed since the
        last time (same signature) or the entry is gone or ignored."""
        if ignored(name):
            return False
        path = self._path(name)
        try:
            st = os.lstat(path)
        except OSError:
            return self.forget(name)
        sig = signature(st)
        place = self.place()[0]
        under = (place.gen.name, place.fanin_fields)
        old = self.verdicts.get(name)
        if old is not None and old.sig == sig and old.under == under:
            return False
        self.verdicts[name] = self._verdict(name, st, sig, place)
        return True

    def forget(self, name: str) -> bool:
        return self.verdicts.pop(name, None) is not None

    def _verdict(self, name: str, st: os.stat_result, sig: Sig, place: Place) -> FileVerdict:
        report, problem = judge_entry(self.ref, classify(name), stat.S_ISLNK(st.st_mode), self,
                                      place)
        return FileVerdict(sig, report, [problem] if problem is not None else [],
                       (place.gen.name, place.fanin_fields))

    def read(self, name: str) -> bytes | ReadFailure:
        """Entry bytes for :func:`engine.judge_entry` (counted: one parse per version)."""
        data = read_bytes(self._path(name))
        if not isinstance(data, ReadFailure):
            self.parses += 1
        return data

    def listing(self) -> list[str] | None:
        """The round directory's entry names (sorted, ignored names left out), or None
        when it cannot be listed."""
        try:
            names = os.listdir(self.ref.round_dir)
        except OSError:
            return None
        self.residue = [n for n in names if is_split_residue(n)]  # split_incomplete
        return sorted(n for n in names if not ignored(n))

    # -- the cache the engine's entry loop asks (engine.entries.EntryCache) ---------------
    def verdict(self, name: str, fname: FileName, place: Place
                ) -> tuple[FileReport | None, Diagnostic | None] | None:
        """The kept verdict of entry *name*, judged again when the round's generation
        changed; None for a file not settled yet, or never judged (then it is noted in
        :attr:`unseen`: its events were missed, the caller settles it first)."""
        if name in self._exclude:
            return None
        v = self.verdicts.get(name)
        if v is None:
            self.unseen.append(name)
            return None
        if v.under != (place.gen.name, place.fanin_fields):
            try:
                st = os.lstat(self._path(name))
            except OSError:
                return None
            v = self.verdicts[name] = self._verdict(name, st, signature(st), place)
        return v.report, v.diags[0] if v.diags else None

    def listed(self, files: RoundFiles) -> None:
        """After a judgement: verdicts of entries gone are dropped, the round's own
        generation evidence noted."""
        for gone in [n for n in self.verdicts if n not in files.names]:
            del self.verdicts[gone]
        decided = evidence(files.names, files.beside)
        self.evidence = decided.name if decided is not None else None

    def begin(self, exclude: set[str] | None = None) -> RoundJudge:
        """Ready for one judgement leaving out *exclude* (files not settled yet)."""
        self._exclude = exclude or set()
        self.unseen = []
        return self

    def evaluate(self, run: RunConfig, overrides: Overrides, complete: bool,
                 exclude: set[str] | None = None) -> tuple[RoundResult, list[str]]:
        """The round's result over its judged entries, leaving out *exclude*, and the
        entries on disk never judged (:meth:`verdict`). Commands judge through
        :meth:`qrspi_guard.judge.Judge.judge` with ``cache=judge.begin(exclude)``."""
        result = evaluate_round(self.ref, run, overrides, complete, True, self.ctx,
                                cache=self.begin(exclude))
        return result, list(self.unseen)
