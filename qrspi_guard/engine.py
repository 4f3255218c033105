"""The core: paths in, round results out. No printing, no exits.

``check_paths`` is what ``check`` runs; ``evaluate_round`` is the unit that ``watch``
re-runs when a round changes. Both return data (:class:`CheckResult`,
:class:`RoundResult`) that the report formats and the status file render.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Literal, Protocol

from qrspi_guard import frontmatter as fm
from qrspi_guard.config import Overrides, RunConfig, read_config
from qrspi_guard.diagnostics import Diagnostic, diag
from qrspi_guard.discover import RoundRef, discover_dir, round_of_dir, round_of_file
from qrspi_guard.errors import PathNotFound
from qrspi_guard.fastjudge import fast_report
from qrspi_guard.layout import (
    FileName,
    Kind,
    classify,
    is_legacy_round_file,
    is_watch_temp,
    verified_file_name,
    verifier_disabled_name,
)
from qrspi_guard.matrix import expectation_for_step, expectation_from_tags
from qrspi_guard.reader import Entry, ReadFailure, list_round, read_bytes, read_listed_file
from qrspi_guard.rules.files import FileFacts, FileReport, Place, judge_file, name_rule
from qrspi_guard.rules.rounds import RoundFacts, awaited, completion_rules, tag_rules

Status = Literal["ok", "pending", "halt"]
_LEVEL_ORDER = {"error": 0, "warning": 1, "info": 2}


@dataclass
class RoundResult:
    """One round's verdict."""

    ref: RoundRef
    status: Status
    diagnostics: list[Diagnostic]  #: file, tag and round diagnostics of this round
    run: RunConfig  #: the run's settings (and its run-level diagnostics)
    expected_tags: list[str] = field(default_factory=list)
    reported_tags: list[str] = field(default_factory=list)
    awaiting: list[str] = field(default_factory=list)
    files: int = 0
    file_names: list[str] = field(default_factory=list)  #: findings, sentinels, sidecars
    complete: bool = True

    @property
    def all_diagnostics(self) -> list[Diagnostic]:
        """Round diagnostics plus the run-level ones that bear on it (for status files)."""
        return self.run.diagnostics + self.diagnostics


@dataclass
class CheckResult:
    rounds: list[RoundResult] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)  #: every diagnostic, in order
    files: int = 0
    not_in_round: list[str] = field(default_factory=list)  #: file arguments outside rounds

    def count(self, level: str) -> int:
        return sum(1 for d in self.diagnostics if d.level == level)

    def failed(self, strict: bool = False) -> bool:
        return self.count("error") > 0 or (strict and self.count("warning") > 0)


def _join(base: str, name: str) -> str:
    return name if base in ("", ".") else os.path.join(base, name)


_CLASSIFIED: dict[str, FileName] = {}


def _classify(name: str) -> FileName:
    """:func:`classify`, remembered: rounds repeat the same names (a pure function)."""
    got = _CLASSIFIED.get(name)
    if got is None:
        got = classify(name)
        if len(_CLASSIFIED) < 4096:
            _CLASSIFIED[name] = got
    return got


class EntryReader(Protocol):
    def read(self, name: str) -> bytes | ReadFailure: ...


_OUTPUT_KINDS = (Kind.FINDING, Kind.CLEAN, Kind.SIDECAR)


def judge_entry(ref: RoundRef, fname: FileName, is_symlink: bool,
                reader: EntryReader) -> tuple[FileReport | None, Diagnostic | None]:
    """One round-directory entry: its name rule, a link or a read failure, else the
    per-file rules. Returns (report, entry diagnostic); no report for entries that are
    not reviewer output. ``check`` and ``watch`` both judge entries through here."""
    name = fname.name
    path = _join(ref.round_dir, name)
    kind = fname.kind
    output = kind in _OUTPUT_KINDS
    if is_symlink:  # whatever its name says, a link is a link
        return (FileReport(FileFacts(name, kind, fname.tag, fname.fnum)) if output else None,
                diag("symlink_in_round_dir", "symbolic link in a round directory; not "
                     "followed", file=name, path=path, step=ref.step, round=ref.round))
    if not output:
        # the name rule speaks about the other kinds only
        problem = name_rule(fname, Place(path, ref.step, ref.round, ref.is_task))
        return None, problem  # orchestrator files: neither
    data = reader.read(name)
    if isinstance(data, ReadFailure):
        return (FileReport(FileFacts(name, kind, fname.tag, fname.fnum)),
                diag("unreadable_file", f"{name} {data.message}", file=name, path=path,
                     step=ref.step, round=ref.round))
    place = Place(ref.round_dir, ref.step, ref.round, ref.is_task)
    report = fast_report(fname, data, place) if fm.FASTPATH else None
    if report is None:
        report = judge_file(fname, data, Place(path, ref.step, ref.round, ref.is_task))
    return report, None


class _RoundReader:
    """Reads a listed round's entries relative to its directory descriptor, opened on
    first use; *contents* stands in for bytes not on disk yet (the hook)."""

    def __init__(self, round_dir: str, entries: dict[str, Entry],
                 contents: dict[str, bytes]) -> None:
        self.round_dir = round_dir
        self.entries = entries
        self.contents = contents
        self.dir_fd: int | None = None

    def read(self, name: str) -> bytes | ReadFailure:
        if name in self.contents:
            return self.contents[name]
        if self.dir_fd is None:
            self.dir_fd = os.open(self.round_dir, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        entry = self.entries.get(name)
        if entry is not None and entry.is_file:
            return read_listed_file(name, self.dir_fd)
        return read_bytes(name, dir_fd=self.dir_fd)

    def close(self) -> None:
        if self.dir_fd is not None:
            os.close(self.dir_fd)
            self.dir_fd = None


def judge_round_files(ref: RoundRef, contents: dict[str, bytes] | None = None,
                      ignore_temp: bool = False) -> tuple[list[FileReport], list[Diagnostic],
                                                          int]:
    """Per-file rules for every entry of a round directory.

    *contents* replaces what is on disk for some names (the hook judges a write before
    it lands). *ignore_temp* skips editor and temp names (``watch`` mode). Returns the
    file reports, the name/entry diagnostics and the file count.
    """
    listing = list_round(ref.round_dir)
    reports: list[FileReport] = []
    entry_diags: list[Diagnostic] = []
    if isinstance(listing, ReadFailure):
        entry_diags.append(diag("unreadable_file", f"round directory {listing.message}",
                                path=ref.round_dir, step=ref.step, round=ref.round))
        listing = []
    extra = dict(contents or {})
    entries = {e.name: e for e in listing}
    # split's reserved hidden names are the one exception to "hidden names are ignored":
    # a round holding them is `split_incomplete`; in watch mode (ignore_temp) only while
    # no split holds the round's lock (qrspi_guard/split/residue.py).
    from qrspi_guard.split.residue import residue_diagnostics
    entry_diags.extend(residue_diagnostics(ref.round_dir, entries, watching=ignore_temp,
                                           step=ref.step, round=ref.round))
    names_seen = sorted(set(entries) | set(extra)) if extra else list(entries)
    reader = _RoundReader(ref.round_dir, entries, extra)
    count = 0
    try:
        for name in names_seen:
            fname = _CLASSIFIED.get(name) or _classify(name)
            if fname.kind is Kind.HIDDEN or (ignore_temp and is_watch_temp(name)):
                continue
            count += 1
            entry = entries.get(name)
            is_link = name not in extra and entry is not None and entry.is_symlink
            report, problem = judge_entry(ref, fname, is_link, reader)
            if report is not None:
                reports.append(report)
            if problem is not None:
                entry_diags.append(problem)
    except OSError as exc:
        entry_diags.append(diag("unreadable_file", f"round directory cannot be read: "
                                f"{exc.strerror or exc}", path=ref.round_dir, step=ref.step,
                                round=ref.round))
    finally:
        reader.close()
    return reports, entry_diags, count


def evaluate_round(ref: RoundRef, run: RunConfig, overrides: Overrides,
                   complete: bool = True, ignore_temp: bool = False) -> RoundResult:
    """Every rule for one round. *complete* False applies the per-file and tag rules
    only (``watch`` before the round settles); *ignore_temp* is ``watch`` mode."""
    reports, diags, count = judge_round_files(ref, ignore_temp=ignore_temp)
    return round_result(ref, run, overrides, reports, diags, count, complete=complete)


def round_result(ref: RoundRef, run: RunConfig, overrides: Overrides,
                 reports: list[FileReport], entry_diags: list[Diagnostic], count: int,
                 complete: bool = True) -> RoundResult:
    """The round-level half of :func:`evaluate_round`, over per-file reports already made.

    ``watch`` keeps one report per settled file and calls this instead of re-reading and
    re-judging every file of the round on each change (and so never judges a file that
    is still being written).
    """
    diags = list(entry_diags)
    for r in reports:
        diags.extend(r.diagnostics)
    facts = round_facts(ref, run, overrides, [r.facts for r in reports])
    diags.extend(tag_rules(facts))
    verdict = completion_rules(facts) if complete else awaited(facts)
    diags.extend(verdict.diagnostics)
    result = RoundResult(ref, "ok", [], run, files=count, complete=complete,
                         expected_tags=verdict.expected_tags,
                         reported_tags=verdict.reported_tags, awaiting=verdict.awaiting,
                         file_names=[f.name for f in facts.files])
    if run.route is not None and ref.step and not ref.is_task and not _on_route(ref.step,
                                                                                run.route):
        diags.append(diag("step_not_on_route", f"step {ref.step} is not on the run's route "
                          f"({', '.join(run.route)})", path=ref.round_dir, step=ref.step,
                          round=ref.round))
    result.diagnostics = sort_diagnostics(diags)
    if any(d.level == "error" for d in result.all_diagnostics):
        result.status = "halt"
    elif not complete:
        result.status = "pending"
    return result


def _on_route(step: str, route: tuple[str, ...]) -> bool:
    if step == "integration":
        return bool({"integration", "integrate", "implement-gate"} & set(route))
    return step in route


def round_facts(ref: RoundRef, run: RunConfig, overrides: Overrides,
                files: list[FileFacts]) -> RoundFacts:
    """Gather what the round rules need: the expectation, verifier state, totals."""
    if overrides.expect:
        expectation = expectation_from_tags(overrides.expect)
    elif ref.is_task or ref.step is None or run.second_reviewer is None:
        expectation = None
    else:
        expectation = expectation_for_step(ref.step, run.second_reviewer)
    disabled = verifier_disabled_name(ref.round)
    waived = os.path.exists(_join(ref.step_dir, disabled)) or os.path.exists(
        _join(ref.round_dir, disabled))
    verified_path = _join(ref.step_dir, verified_file_name(ref.round))
    facts = RoundFacts(ref.round_dir, ref.step, ref.round, ref.is_task, files, expectation,
                       run.verifier_enabled, waived, require_sidecars=overrides.require_sidecars)
    if os.path.isfile(verified_path):
        facts.verified = True
        facts.verified_path = verified_path
        data = read_bytes(verified_path)
        if isinstance(data, ReadFailure):
            facts.verified_error = data.message
        else:
            decoded = fm.decode(data)
            doc = fm.parse(decoded.text) if isinstance(decoded, fm.Decoded) else None
            if isinstance(doc, fm.Document):
                facts.verified_totals = doc.data
            else:
                facts.verified_error = getattr(doc or decoded, "message", "unreadable")
    return facts


def sort_diagnostics(diags: list[Diagnostic]) -> list[Diagnostic]:
    return sorted(diags, key=lambda d: (d.path, d.line or 0, _LEVEL_ORDER[d.level], d.cause))


@dataclass
class _Plan:
    """What one check covers: rounds in order, and layout diagnostics met on the way."""

    rounds: dict[str, RoundRef] = field(default_factory=dict)
    layout: list[Diagnostic] = field(default_factory=list)
    not_in_round: list[str] = field(default_factory=list)


def plan(paths: Iterable[str], overrides: Overrides) -> _Plan:
    """Resolve PATH arguments to whole rounds (files are grouped by their round)."""
    p = _Plan()
    real_dirs: dict[str, str] = {}
    for path in paths:
        if not os.path.lexists(path):
            raise PathNotFound(path)
        found: Iterator[RoundRef | Diagnostic]
        if os.path.isdir(path):
            found = discover_dir(path)
        else:
            ref = round_of_file(path, overrides.step)
            if ref is None:
                name = os.path.basename(path)
                if is_legacy_round_file(name) or name.endswith("-review.md"):
                    p.layout.append(diag("legacy_layout", f"older single-file round layout "
                                         f"({name}); skipped", path=path))
                else:
                    p.not_in_round.append(path)
                continue
            found = iter([ref])
        for item in found:
            if isinstance(item, Diagnostic):
                if item not in p.layout:
                    p.layout.append(item)
            else:
                if overrides.step and item.step != overrides.step:
                    item = RoundRef(item.round_dir, item.step_dir, overrides.step, item.round,
                                    item.is_task, item.artifact_dir)
                p.rounds.setdefault(_round_key(item.round_dir, real_dirs), item)
    return p


def _round_key(round_dir: str, real_dirs: dict[str, str]) -> str:
    """The round directory's real path (how rounds reached twice are told apart),
    resolving each step directory once: a round directory that is not a symbolic link
    is its parent's real path plus its name (its name is `round-NN`, never `.` or `..`)."""
    norm = os.path.normpath(round_dir)
    if os.path.islink(norm):
        return os.path.realpath(norm)
    parent, name = os.path.split(norm)
    real = real_dirs.get(parent)
    if real is None:
        real = real_dirs[parent] = os.path.realpath(parent or ".")
    return os.path.join(real, name)


def check_paths(paths: Iterable[str], overrides: Overrides | None = None) -> CheckResult:
    """Check every round at or below *paths*. Raises :class:`PathNotFound`.

    Rounds are judged one at a time (a round's parsed files are dropped before the next
    is read); large trees are shared with forked workers (:func:`jobs`), and the result
    is the same, in the same order, whatever the number of processes.
    """
    overrides = overrides or Overrides()
    the_plan = plan(list(paths) or ["."], overrides)
    result = CheckResult(not_in_round=the_plan.not_in_round)
    configs: dict[str | None, RunConfig] = {}
    real: dict[str, str] = {}
    refs = list(the_plan.rounds.values())
    runs: list[RunConfig] = []
    first_use: dict[int, list[Diagnostic]] = {}
    for i, ref in enumerate(refs):
        key = None
        if ref.artifact_dir:
            key = real.get(ref.artifact_dir)
            if key is None:
                key = real[ref.artifact_dir] = os.path.realpath(ref.artifact_dir)
        if key not in configs:
            configs[key] = read_config(ref.artifact_dir, overrides)
            first_use[i] = configs[key].diagnostics
        runs.append(configs[key])
    diags: list[Diagnostic] = list(the_plan.layout)
    shared: dict[tuple[str, ...], list[str]] = {}
    for i, rr in enumerate(_evaluate_rounds(refs, runs, overrides)):
        if i in first_use:
            diags.extend(first_use[i])
        # Rounds repeat the same names and tags: keep one copy of each list, so that
        # memory stays flat however many rounds there are.
        rr.file_names = shared.setdefault(tuple(rr.file_names), rr.file_names)
        rr.expected_tags = shared.setdefault(tuple(rr.expected_tags), rr.expected_tags)
        rr.reported_tags = shared.setdefault(tuple(rr.reported_tags), rr.reported_tags)
        result.rounds.append(rr)
        result.files += rr.files
        diags.extend(rr.diagnostics)
    result.diagnostics = diags
    return result


#: Below this many rounds ``check`` stays in one process: forking would not pay.
PARALLEL_MIN_ROUNDS = 24


def jobs(rounds: int) -> int:
    """How many processes judge *rounds* rounds: ``QRSPI_GUARD_JOBS`` when set, else
    one per core (at most 4) for large trees on a single-threaded caller."""
    env = os.environ.get("QRSPI_GUARD_JOBS", "").strip()
    if env.isdigit() and int(env) >= 1:
        wanted = int(env)
    else:
        if rounds < PARALLEL_MIN_ROUNDS:
            return 1
        try:
            cores = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            cores = os.cpu_count() or 1
        wanted = min(cores, 4)
    if wanted > 1:
        import threading

        if not hasattr(os, "fork") or threading.active_count() > 1:
            return 1  # forking a threaded process is unsafe; stay serial
    return max(1, min(wanted, rounds))


def _evaluate_rounds(refs: list[RoundRef], runs: list[RunConfig],
                     overrides: Overrides) -> Iterator[RoundResult]:
    """Each round's result, in order; rounds i with i % n == w go to worker w > 0."""
    n = jobs(len(refs))
    if n == 1:
        for ref, run in zip(refs, runs, strict=True):
            yield evaluate_round(ref, run, overrides)
        return
    workers: list[tuple[int, int] | None] = []
    try:
        for w in range(1, n):
            r, wr = os.pipe()
            pid = os.fork()
            if pid == 0:  # pragma: no cover - runs in the child
                _worker(wr, [x[1] for x in workers if x is not None] + [r], refs, runs,
                        overrides, w, n)
            os.close(wr)
            workers.append((pid, r))
        for i, (ref, run) in enumerate(zip(refs, runs, strict=True)):
            w = i % n
            got = None
            slot = workers[w - 1] if w else None
            if slot is not None:
                got = _receive(slot[1])
                if got is None:  # the worker failed: judge its rounds here
                    _reap(slot)
                    workers[w - 1] = None
            if got is None:
                yield evaluate_round(ref, run, overrides)
            else:
                rr = RoundResult.__new__(RoundResult)
                rr.__dict__.update(got, ref=ref, run=run)
                yield rr
    finally:
        for slot in workers:
            if slot is not None:
                _reap(slot)


def _worker(out: int, close: list[int], refs: list[RoundRef], runs: list[RunConfig],
            overrides: Overrides, w: int, n: int) -> None:  # pragma: no cover - a child
    """A forked worker: judge rounds w, w+n, ... and send each result down *out*."""
    code = 0
    try:
        import pickle

        for fd in close:
            os.close(fd)
        try:
            import fcntl

            # a larger pipe lets the worker run ahead of the parent (Linux)
            fcntl.fcntl(out, getattr(fcntl, "F_SETPIPE_SZ", 1031), 1 << 20)
        except (ImportError, OSError):
            pass
        for i in range(w, len(refs), n):
            rr = evaluate_round(refs[i], runs[i], overrides)
            # every field but the round and run the parent already holds
            state = {k: v for k, v in vars(rr).items() if k not in ("ref", "run")}
            blob = pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)
            view = memoryview(len(blob).to_bytes(4, "little") + blob)
            while view:
                view = view[os.write(out, view):]
    except BaseException:
        code = 1
    finally:
        os._exit(code)


def _receive(fd: int) -> dict[str, object] | None:
    """One result from a worker's pipe, or None when the worker ended early."""
    import pickle

    head = _read_exact(fd, 4)
    if head is None:
        return None
    blob = _read_exact(fd, int.from_bytes(head, "little"))
    if blob is None:
        return None
    return pickle.loads(blob)  # type: ignore[no-any-return]


def _read_exact(fd: int, size: int) -> bytes | None:
    chunks = []
    while size:
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _reap(slot: tuple[int, int]) -> None:
    pid, fd = slot
    try:
        os.close(fd)
    except OSError:
        pass
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def check_round_dir(round_dir: str, overrides: Overrides | None = None) -> RoundResult | None:
    """Evaluate a single round directory (``watch`` and embedders)."""
    overrides = overrides or Overrides()
    ref = round_of_dir(round_dir, overrides.step)
    if ref is None:
        return None
    return evaluate_round(ref, read_config(ref.artifact_dir, overrides), overrides)
