"""A round directory's entries, read and judged: the per-file half of a round.

:func:`read_round` lists the round once, tells its generation, and judges every entry
(:func:`judge_entry`, which ``check``, ``watch`` and ``hook`` share), reading files
relative to the round directory's descriptor.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Protocol

from qrspi_guard.contract.diagnostics import Diagnostic, diag
from qrspi_guard.contract.generations import DEFAULT_GENERATION, Generation
from qrspi_guard.contract.layout import (
    RESERVED_PREFIX,
    FileName,
    Kind,
    RoundRef,
    classify_cached,
    is_fanin_finding_glob,
    is_watch_temp,
)
from qrspi_guard.contract.runconfig import Overrides
from qrspi_guard.engine.generation import GenerationResolver
from qrspi_guard.engine.results import Keep, kept, sort_diagnostics
from qrspi_guard.engine.sides import SideFiles
from qrspi_guard.parse import frontmatter as fm
from qrspi_guard.parse.nofollow import open_round_dir
from qrspi_guard.parse.reader import Entry, ReadFailure, list_round, read_bytes, read_listed_file
from qrspi_guard.records import field, record
from qrspi_guard.rules.consequences import roots_only
from qrspi_guard.rules.facts import FileFacts, FileReport, Place
from qrspi_guard.rules.fastjudge import fast_report
from qrspi_guard.rules.filejudge import (
    FAN_IN_SUFFIX,
    fanin_change_type,
    fanin_score_of,
    judge_file,
    name_rule,
)
from qrspi_guard.rules.splitresidue import residue_diagnostics


@record
class Context:
    """What judging rounds needs besides the round itself, shared across rounds."""

    overrides: Overrides = field(default_factory=Overrides)
    sides: SideFiles = field(default_factory=SideFiles)
    resolver: GenerationResolver | None = None

    def __post_init__(self) -> None:
        if self.resolver is None:
            self.resolver = GenerationResolver(self.overrides.protocol, self.sides)

    @classmethod
    def for_check(cls, overrides: Overrides) -> Context:
        """One ``check`` run: step directories listed once."""
        return cls(overrides, SideFiles(cache=True))


class EntryReader(Protocol):
    def read(self, name: str) -> bytes | ReadFailure: ...


def place_of(ref: RoundRef, gen: Generation = DEFAULT_GENERATION,
             fanin_fields: bool = False) -> Place:
    """The round's own place (its entries': :meth:`Place.entry`)."""
    return Place(ref.round_dir, ref.step if ref.kind != "unknown_step" else None, ref.round,
                 ref.is_task or ref.kind == "unknown_step", gen, fanin_fields)


def _facts(fname: FileName) -> FileFacts:
    return FileFacts(fname.name, fname.kind, fname.tag, fname.fnum, fname.suffix)


def _not_judged(ref: RoundRef, fname: FileName, is_symlink: bool, reader: EntryReader,
                place: Place, output: bool) -> tuple[FileReport | None, Diagnostic | None]:
    """An entry whose content the per-file rules do not read: a link, a name the round's
    rules judge, or a name with a rule of its own. *place* is the entry's."""
    name = fname.name
    path = place.path
    kind = fname.kind
    facts = _facts(fname)
    if is_symlink:  # whatever its name says, a link is a link
        return (FileReport(facts) if output or kind is Kind.SIDECAR_OTHER else None,
                diag("symlink_in_round_dir", "symbolic link in a round directory; not "
                     "followed", file=name, path=path, step=ref.step, round=ref.round))
    if kind is Kind.SIDECAR_OTHER:  # its rule is the round's (which suffix is right)
        return FileReport(facts), None
    if kind is Kind.NO_FINDINGS:  # await-round.sh's marker: the tag's output, not canonical
        return FileReport(facts, [diag(
            "clean_noncanonical", f"{name} is await-round.sh's clean marker; the protocol's "
            f"clean sentinel is {fname.tag}.clean.md (reviewer, round, findings: 0)",
            file=name, path=path, step=ref.step, round=ref.round)]), None
    problem = name_rule(fname, place)
    if place.fanin_fields and kind in (Kind.BAD_TAG, Kind.BAD_FINDING_NAME) and (
            is_fanin_finding_glob(name) or name.endswith(FAN_IN_SUFFIX)):
        # the fan-in counts and scores it whatever its name: its recount needs it
        data = reader.read(name)
        if not isinstance(data, ReadFailure):
            if name.endswith(FAN_IN_SUFFIX):
                facts.fanin_score = fanin_score_of(data)
            else:
                facts.fanin_change_type = fanin_change_type(data)
        return FileReport(facts), problem
    return None, problem


def judge_entry(ref: RoundRef, fname: FileName, is_symlink: bool, reader: EntryReader,
                place: Place | None = None) -> tuple[FileReport | None, Diagnostic | None]:
    """One round-directory entry: its name rule, a link or a read failure, else the
    per-file rules, under the round's *place* (:func:`place_of`; the entry's own is made
    from it once, and only when a rule needs it: never for a file the fast path
    accepts). Returns (report, entry diagnostic); no report for entries that are not
    reviewer output. ``check``, ``watch`` and ``hook`` judge entries through here."""
    place = place or place_of(ref)
    name = fname.name
    kind = fname.kind
    # (identity tests, not set membership: hashing an enum member costs, once a file)
    if kind is Kind.FINDING or kind is Kind.CLEAN or kind is Kind.SIDECAR:
        output = True
    elif kind is Kind.VF_SKIP or kind is Kind.VF_BYPASS:
        output = place.is_task
    else:
        output = False
    if output and not is_symlink:  # the common case first: a file to read and judge
        data = reader.read(name)
        if isinstance(data, ReadFailure):
            return (FileReport(_facts(fname)),
                    diag("unreadable_file", f"{name} {data.message}", file=name,
                         path=place.entry(name).path, step=ref.step, round=ref.round))
    else:
        return _not_judged(ref, fname, is_symlink, reader, place.entry(name), output)
    report = fast_report(fname, data, place) if fm.FASTPATH else None
    if report is None:
        report = judge_file(fname, data, place.entry(name))
    return report, None


class RoundReader:
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
            try:
                # never through a link swapped in since the listing (parse.nofollow)
                self.dir_fd = open_round_dir(self.round_dir)
            except OSError as exc:
                return ReadFailure(f"cannot be read: {exc.strerror or exc}")
        entry = self.entries.get(name)
        if entry is not None and entry.is_file:
            return read_listed_file(name, self.dir_fd)
        return read_bytes(name, dir_fd=self.dir_fd)

    def close(self) -> None:
        if self.dir_fd is not None:
            os.close(self.dir_fd)
            self.dir_fd = None


@record
class RoundFiles:
    """A round's entries, judged: the per-file half of its verdict."""

    reports: list[FileReport]
    diags: list[Diagnostic]  #: name and entry diagnostics
    count: int  #: entries counted as the round's files
    gen: Generation
    names: set[str]  #: every entry name (hidden ones included)
    beside: frozenset[str]  #: suffixes of the files beside the round


class EntryCache(Protocol):
    """Verdicts kept between judgements (``watch``: one per settled version of a file)."""

    def verdict(self, name: str, fname: FileName, place: Place
                ) -> tuple[FileReport | None, Diagnostic | None] | None:
        """The entry's verdict under *place*; None leaves the entry out (not settled)."""

    def listed(self, files: RoundFiles) -> None:
        """The round as listed and judged this time."""


def read_round(ref: RoundRef, ctx: Context | None = None,
               contents: Mapping[str, bytes | None] | None = None,
               ignore_temp: bool = False, cache: EntryCache | None = None) -> RoundFiles:
    """List and judge every entry of a round directory: the one entry loop.

    *contents* replaces what is on disk for some names (the hook judges a write before
    it lands; None: as if the name were absent). *ignore_temp* skips editor and temp
    names (``watch`` mode). *cache* gives each entry's verdict instead of reading it.
    """
    ctx = ctx or Context()
    listing = list_round(ref.round_dir)
    entry_diags: list[Diagnostic] = []
    if isinstance(listing, ReadFailure):
        entry_diags.append(diag("unreadable_dir", f"round directory {listing.message}",
                                path=ref.round_dir, step=ref.step, round=ref.round))
        listing = []
    extra: dict[str, bytes] = {}
    entries = {e.name: e for e in listing}
    if contents:
        for name, data in contents.items():
            if data is None:
                entries.pop(name, None)
            else:
                extra[name] = data
    names_seen = sorted(set(entries) | set(extra)) if contents else list(entries)
    names = set(names_seen)
    beside = ctx.sides.beside(ref.step_dir, ref.round)
    assert ctx.resolver is not None
    gen = ctx.resolver.of(ref, names_seen, beside)
    place = place_of(ref, gen, bool(gen.outputs_inside & names))
    reader = RoundReader(ref.round_dir, entries, extra)
    reports: list[FileReport] = []
    residue: list[str] = []
    count = 0
    try:
        for name in names_seen:
            fname = classify_cached(name)
            kind = fname.kind
            if kind is Kind.HIDDEN:
                if name.startswith(RESERVED_PREFIX):
                    residue.append(name)
                continue
            if kind is Kind.MANIFEST or (kind is Kind.FANIN_AUDIT
                                         and name in gen.outputs_inside):
                continue  # hidden bookkeeping, read with the round's inputs
            if ignore_temp and is_watch_temp(name):
                continue
            if cache is not None:
                got = cache.verdict(name, fname, place)
                if got is None:
                    continue
                report, problem = got
            else:
                entry = entries.get(name)
                is_link = name not in extra and entry is not None and entry.is_symlink
                report, problem = judge_entry(ref, fname, is_link, reader, place)
            count += 1
            if report is not None:
                reports.append(report)
            if problem is not None:
                entry_diags.append(problem)
    except OSError as exc:
        entry_diags.append(diag("unreadable_dir", f"round directory cannot be read: "
                                f"{exc.strerror or exc}", path=ref.round_dir, step=ref.step,
                                round=ref.round))
    finally:
        reader.close()
    if residue and not (ignore_temp and _split_at_work(ref.round_dir)):
        # split's reserved hidden names are the one exception to "hidden names are
        # ignored": a round holding them is `split_incomplete`; in watch mode
        # (ignore_temp) only while no split holds the round's lock
        entry_diags.extend(residue_diagnostics(ref.round_dir, residue, ref.step, ref.round))
    files = RoundFiles(reports, entry_diags, count, gen, names, beside)
    if cache is not None:
        cache.listed(files)
    return files


def judge_round_files(ref: RoundRef, contents: dict[str, bytes] | None = None,
                      ignore_temp: bool = False, ctx: Context | None = None,
                      ) -> tuple[list[FileReport], list[Diagnostic], int]:
    """(reports, entry diagnostics, file count) of :func:`read_round`."""
    files = read_round(ref, ctx, contents, ignore_temp)
    return files.reports, files.diags, files.count


def file_scope(ref: RoundRef, ctx: Context | None = None,
               overlay: Mapping[str, bytes | None] | None = None,
               keep: Keep | None = None) -> list[Diagnostic]:
    """The file-scope half of a round's verdict, as :func:`.rounds.evaluate_round`
    gives it for a round not complete yet: every entry judged (one entry loop) and the
    tag rules over them (a suffixed round: its ``bad_round_dir_name`` instead), with
    *keep* applied; none of the round's inputs is read (the hook, which reports only
    what is said about the files it is asked about)."""
    from qrspi_guard.rules.rounds import RoundFacts, tag_rules

    files = read_round(ref, ctx, overlay)
    diags = list(files.diags)
    for report in files.reports:
        diags.extend(report.diagnostics)
    if ref.kind == "suffixed":
        from qrspi_guard.rules.placement import suffixed_dir

        diags.append(suffixed_dir(ref))
    else:
        diags.extend(tag_rules(RoundFacts(ref.round_dir, ref.step, ref.round or 0, ref.is_task,
                                          [r.facts for r in files.reports], gen=files.gen,
                                          names=files.names)))
    return roots_only(kept(sort_diagnostics(diags), keep))


def _split_at_work(round_dir: str) -> bool:
    """Whether a split holds the round's lock (the lock module is read only when a round
    has split residue to explain)."""
    from qrspi_guard.engine.roundlock import split_lock_held

    return split_lock_held(round_dir)
