"""Rules over a tag's files and over a whole round (contract §4, §5; generations.md §2-§5).

Tag rules (duplicate ids, clean beside findings, F-number gaps, orphan and
wrong-extension sidecars, VERIFY_FAILED) hold as soon as the files are there.
Completion rules (the expected tags, required sidecars, the verifier's results) apply
only once the round is complete. Everything here is a pure function of
:class:`RoundFacts`, which the engine gathers (all reading happens before).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from functools import partial
from typing import TYPE_CHECKING, Any

from qrspi_guard.contract.diagnostics import Diagnostic, diag
from qrspi_guard.contract.generations import DEFAULT_GENERATION, Generation, Thresholds
from qrspi_guard.contract.layout import CLEAN_KINDS, Kind
from qrspi_guard.contract.matrix import Expectation
from qrspi_guard.records import field, record
from qrspi_guard.rules.facts import FileFacts

if TYPE_CHECKING:
    from qrspi_guard.contract.causes import Level
    from qrspi_guard.rules.verifier import Audit

#: steps whose missing sidecars are warnings, not halts (§5)
SIDECAR_WARN_STEPS = frozenset({"plan", "integration", "test"})
#: at most this many missing F numbers are named in a fnum_gap message
_GAP_SHOWN = 10


@record
class RoundFacts:
    """Everything the round rules look at, gathered by the engine."""

    path: str  #: round directory display path
    step: str | None
    round: int
    is_task: bool
    files: list[FileFacts]
    expectation: Expectation | None = None  #: None: no expected set for this round
    verifier_enabled: bool = True
    waived: bool = False  #: a well-formed round-NN-verifier-disabled.md
    verified: bool = False  #: apply-fix: round-NN-verified.md beside; fan-in: outputs inside
    require_sidecars: bool = False
    gen: Generation = DEFAULT_GENERATION
    #: the project configuration's `thresholds` (exactly those, no alternative)
    thresholds: Thresholds | None = None
    verified_path: str | None = None
    verified_totals: dict[str, Any] | None = None  #: frontmatter of round-NN-verified.md
    verified_error: str | None = None
    #: fan-in outputs: the audit (None: absent) and the kept list's lines (None: absent)
    audit: Audit | None = None
    audit_path: str | None = None
    kept_lines: list[str] | None = None
    kept_path: str | None = None
    names: set[str] = field(default_factory=set)  #: every entry name in the round


@record
class RoundVerdict:
    diagnostics: list[Diagnostic] = field(default_factory=list)
    expected_tags: list[str] = field(default_factory=list)
    reported_tags: list[str] = field(default_factory=list)
    awaiting: list[str] = field(default_factory=list)


def reported_tags(files: Iterable[FileFacts]) -> list[str]:
    """Tags that wrote output: findings, clean sentinels, or a valid skip sentinel."""
    return sorted({f.tag for f in files if f.tag and (
        f.kind is Kind.FINDING or f.kind in CLEAN_KINDS
        or (f.kind is Kind.VF_SKIP and f.stands_for_output))})


def sidecar_map(rf: RoundFacts) -> dict[tuple[str | None, int | None], FileFacts]:
    """The round's sidecars of the right extension, by (tag, F number)."""
    suffix = rf.gen.sidecar.suffix
    return {(f.tag, f.fnum): f for f in rf.files
            if f.kind is Kind.SIDECAR and f.suffix == suffix}


def tag_rules(rf: RoundFacts) -> list[Diagnostic]:
    d = partial(diag, step=rf.step, round=rf.round)
    out: list[Diagnostic] = []
    by_tag: dict[str, list[FileFacts]] = defaultdict(list)
    for f in rf.files:
        if f.tag:
            by_tag[f.tag].append(f)
    right = rf.gen.sidecar.suffix
    for tag in sorted(by_tag):
        files = by_tag[tag]
        findings = [f for f in files if f.kind is Kind.FINDING]
        cleans = [f for f in files if f.kind in CLEAN_KINDS]
        out.extend(_duplicates(rf, tag, findings, d))
        if findings and cleans:
            out.append(d("clean_and_findings_coexist", f"{tag} has both {cleans[0].name} and "
                         f"{len(findings)} finding file(s): stale output of an earlier attempt",
                         file=cleans[0].name, path=_in(rf, cleans[0].name), tag=tag))
        gap = _gap(sorted({f.fnum for f in findings if f.fnum is not None}))
        if gap:
            out.append(d("fnum_gap", f"{tag}'s findings skip {gap}", tag=tag, path=rf.path))
        finding_nums = {f.fnum for f in findings}
        for f in files:  # (the engine sorts every diagnostic at the end)
            if f.kind is Kind.SIDECAR_OTHER or (f.kind is Kind.SIDECAR and f.suffix != right):
                out.append(d("sidecar_wrong_extension", f"sidecar {f.name} is not named "
                             f"<finding stem>{right}, as a {rf.gen.name} round's verifier "
                             "writes it; its finding counts as having no sidecar",
                             file=f.name, path=_in(rf, f.name), tag=tag))
            elif f.kind is Kind.SIDECAR and f.fnum not in finding_nums:
                out.append(d("orphan_sidecar", f"sidecar without its finding "
                             f"{tag}.finding-F{f.fnum:02d}.md", file=f.name,
                             path=_in(rf, f.name), tag=tag))
    failed = sorted((f for f in sidecar_map(rf).values() if f.verify_failed),
                    key=lambda f: f.name)
    if failed and not rf.waived:
        out.append(d("verify_failed", f"Verifier returned VERIFY_FAILED for {len(failed)} "
                     "findings", path=rf.path, file=failed[0].name))
    return out


def _duplicates(rf: RoundFacts, tag: str, findings: list[FileFacts],
                d: Any) -> list[Diagnostic]:
    """`duplicate_finding_id` on each file that repeats an id another file of the tag
    holds. The id belongs to the first file (in name order) whose name's F number is
    the id's, else to the first file; every other file with it repeats it (and a
    repeat's `fnum_mismatch` says nothing more: one defect)."""
    by_id: dict[str, list[FileFacts]] = defaultdict(list)
    for f in sorted(findings, key=lambda f: f.name):
        if f.finding_id is not None:
            by_id[f.finding_id].append(f)
    out = []
    for fid, files in by_id.items():
        if len(files) < 2:
            continue
        named = [f for f in files if f.fnum is not None and _id_fnum(fid) == f.fnum]
        keeper = named[0] if named else files[0]  # the file the id belongs to
        repeats = [f for f in files if f is not keeper]
        for f in repeats:
            out.append(d("duplicate_finding_id", f"finding_id {fid} is also used by "
                         f"{keeper.name}", file=f.name, path=_in(rf, f.name),
                         field="finding_id", tag=tag))
    return out


def _id_fnum(finding_id: str) -> int | None:
    """The F number of a finding_id ``R<n>-F<NN>`` (None when it has none)."""
    head, sep, tail = finding_id.rpartition("-F")
    return int(tail) if sep and tail.isdigit() and len(tail) <= 9 else None


def _gap(nums: list[int]) -> str:
    """The F numbers missing from 1..max(nums), named up to a few and counted, in time
    bounded by the number of findings (never by the values)."""
    shown: list[str] = []
    missing = 0
    previous = 0
    for n in nums:
        if n > previous + 1:
            missing += n - previous - 1
            start = previous + 1
            while start < n and len(shown) < _GAP_SHOWN:
                shown.append(f"F{start:02d}")
                start += 1
        previous = n
    if not missing:
        return ""
    more = missing - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def awaited(rf: RoundFacts) -> RoundVerdict:
    """Which tags the round reported, expects and still awaits (no diagnostics): what a
    round's status shows whether or not it is complete yet."""
    verdict = RoundVerdict(reported_tags=reported_tags(rf.files))
    if rf.expectation is not None:
        reported = set(verdict.reported_tags)
        _, tags = rf.expectation.best_row(reported)
        verdict.expected_tags = list(tags)
        verdict.awaiting = [t for t in tags if t not in reported]
    return verdict


def silent_message(tag: str) -> str:
    """The protocol's failure-menu wording (contract §5, generations.md §5)."""
    if tag.endswith("-codex"):
        return f"Reviewer {tag} produced no output"
    return f"Reviewer {tag} wrote no per-finding files"


def completion_rules(rf: RoundFacts) -> RoundVerdict:
    """The expected tags, required sidecars and the verifier's results, for a complete
    round."""
    d = partial(diag, step=rf.step, round=rf.round)
    verdict = awaited(rf)
    out = verdict.diagnostics
    if rf.expectation is not None:
        tags = verdict.expected_tags
        for tag in verdict.awaiting:
            out.append(d("expected_tag_no_output", silent_message(tag), tag=tag, path=rf.path))
        routed = rf.expectation.routed
        for tag in sorted({f.tag for f in rf.files if f.tag}):
            if tag not in routed:
                out.append(d("unrouted_tag", f"tag {tag} is not routed for this step "
                             f"(expected: {', '.join(tags) or 'none'})", tag=tag, path=rf.path))
    sidecars = sidecar_map(rf)
    findings = sorted((f for f in rf.files if f.kind is Kind.FINDING), key=lambda f: f.name)
    if rf.verifier_enabled and not rf.waived and (rf.verified or rf.require_sidecars):
        level: Level = "warning" if rf.step in SIDECAR_WARN_STEPS else "error"
        for f in findings:
            if (f.tag, f.fnum) not in sidecars:
                ident = f.finding_id or f"F{f.fnum:02d}"
                out.append(d("sidecar_missing", f"Sidecar missing for finding {f.tag}.{ident}",
                             level=level, file=f.name, path=_in(rf, f.name), tag=f.tag))
    if rf.gen.verified_beside_suffix and rf.verified and rf.verified_path:
        from qrspi_guard.rules.verifier import verified_totals_problem

        gen = rf.gen if rf.thresholds is None else _exactly(rf.gen, rf.thresholds)
        cleans = sum(1 for f in rf.files if f.kind in CLEAN_KINDS)
        problem = verified_totals_problem(
            rf.verified_path.rsplit("/", 1)[-1], rf.verified_totals, rf.verified_error,
            findings, sidecars, cleans, gen)
        if problem:
            out.append(d("verified_totals_mismatch", problem, path=rf.verified_path))
    if rf.gen.outputs_inside and (rf.audit is not None or rf.kept_lines is not None):
        out.extend(_fanin_rules(rf, d))
    return verdict


def _exactly(gen: Generation, thresholds: Thresholds) -> Generation:
    from qrspi_guard.contract.generations import with_thresholds

    return with_thresholds(gen, thresholds)


def _fanin_rules(rf: RoundFacts, d: Any) -> list[Diagnostic]:
    # (the recount is read only where a round has the verifier's outputs to check)
    from qrspi_guard.rules.verifier import (
        audit_problem,
        fanin_recount,
        glob_findings,
        kept_list_problem,
    )

    out: list[Diagnostic] = []
    audit = rf.audit
    if audit is not None and audit.problem:
        out.append(d("fanin_audit_malformed", f".verifier-fan-in-audit.json: {audit.problem}",
                     path=rf.audit_path or rf.path, file=_base(rf.audit_path)))
        audit = None
    thresholds = audit.thresholds if audit is not None else (rf.thresholds or
                                                             rf.gen.thresholds)
    scores = {f.name: f.fanin_score for f in rf.files if f.fanin_score is not None}
    recount = fanin_recount(glob_findings(rf.files), rf.names, scores, thresholds, rf.gen)
    if audit is not None:
        problem = audit_problem(audit, recount)
        if problem:
            out.append(d("fanin_audit_mismatch", problem, path=rf.audit_path or rf.path,
                         file=_base(rf.audit_path)))
    if rf.kept_lines is not None:
        problem = kept_list_problem(rf.kept_lines, recount, rf.names,
                                    audit.halts if audit is not None else 0)
        if problem:
            out.append(d("kept_findings_mismatch", problem, path=rf.kept_path or rf.path,
                         file=_base(rf.kept_path)))
    return out


def _base(path: str | None) -> str | None:
    return path.rsplit("/", 1)[-1] if path else None


def _in(rf: RoundFacts, name: str) -> str:
    return f"{rf.path}/{name}" if rf.path not in ("", ".") else name
