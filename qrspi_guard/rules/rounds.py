"""Rules over a tag's files and over a whole round (round-contract §4, §5).

Tag rules (duplicate ids, clean beside findings, F-number gaps, orphan sidecars,
VERIFY_FAILED) hold as soon as the files are there. Completion rules (the matrix,
required sidecars, the verified totals) apply only once the round is complete.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from qrspi_guard.diagnostics import Diagnostic, diag
from qrspi_guard.layout import Kind
from qrspi_guard.matrix import Expectation
from qrspi_guard.rules.files import FileFacts
from qrspi_guard.schema import AUTO_APPLY, KEEP_THRESHOLD, VERIFY_FAILED

#: steps whose missing sidecars are warnings, not halts (§5)
SIDECAR_WARN_STEPS = frozenset({"plan", "integration", "test"})
TOTAL_KEYS = ("scored", "kept", "dropped", "failed", "clean")


@dataclass
class RoundFacts:
    """Everything the round rules look at, gathered by the engine."""

    path: str  #: round directory display path
    step: str | None
    round: int
    is_task: bool
    files: list[FileFacts]
    expectation: Expectation | None = None  #: None: no matrix for this round
    verifier_enabled: bool = True
    waived: bool = False  #: round-NN-verifier-disabled.md present
    verified: bool = False  #: round-NN-verified.md present
    require_sidecars: bool = False
    verified_path: str | None = None
    verified_totals: dict[str, Any] | None = None  #: frontmatter of round-NN-verified.md
    verified_error: str | None = None


@dataclass
class RoundVerdict:
    diagnostics: list[Diagnostic] = field(default_factory=list)
    expected_tags: list[str] = field(default_factory=list)
    reported_tags: list[str] = field(default_factory=list)
    awaiting: list[str] = field(default_factory=list)


def reported_tags(files: list[FileFacts]) -> list[str]:
    return sorted({f.tag for f in files if f.tag and f.kind in (Kind.FINDING, Kind.CLEAN)})


def tag_rules(rf: RoundFacts) -> list[Diagnostic]:
    d = partial(diag, step=rf.step, round=rf.round)
    out: list[Diagnostic] = []
    by_tag: dict[str, list[FileFacts]] = defaultdict(list)
    for f in rf.files:
        if f.tag:
            by_tag[f.tag].append(f)
    for tag in sorted(by_tag):
        files = by_tag[tag]
        findings = [f for f in files if f.kind is Kind.FINDING]
        cleans = [f for f in files if f.kind is Kind.CLEAN]
        seen: dict[str, str] = {}
        for f in sorted(findings, key=lambda f: f.name):
            if f.finding_id is None:
                continue
            if f.finding_id in seen:
                out.append(d("duplicate_finding_id", f"finding_id {f.finding_id} is also used "
                             f"by {seen[f.finding_id]}", file=f.name, path=_in(rf, f.name),
                             field="finding_id", tag=tag))
            else:
                seen[f.finding_id] = f.name
        if findings and cleans:
            out.append(d("clean_and_findings_coexist", f"{tag} has both {cleans[0].name} and "
                         f"{len(findings)} finding file(s): stale output of an earlier attempt",
                         file=cleans[0].name, path=_in(rf, cleans[0].name), tag=tag))
        nums = sorted({f.fnum for f in findings if f.fnum is not None})
        if nums:
            missing = sorted(set(range(1, nums[-1] + 1)) - set(nums))
            if missing:
                shown = ", ".join(f"F{n:02d}" for n in missing[:10])
                out.append(d("fnum_gap", f"{tag}'s findings skip {shown}", tag=tag,
                             path=rf.path))
        finding_nums = {f.fnum for f in findings}
        for f in files:
            if f.kind is Kind.SIDECAR and f.fnum not in finding_nums:
                out.append(d("orphan_sidecar", f"sidecar without its finding "
                             f"{tag}.finding-F{f.fnum:02d}.md", file=f.name,
                             path=_in(rf, f.name), tag=tag))
    failed = [f for f in rf.files if f.kind is Kind.SIDECAR and f.score == VERIFY_FAILED]
    if failed and not rf.waived:
        out.append(d("verify_failed", f"Verifier returned VERIFY_FAILED for {len(failed)} "
                     "findings", path=rf.path, file=failed[0].name))
    return out


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


def completion_rules(rf: RoundFacts) -> RoundVerdict:
    """The matrix, required sidecars and verified totals, for a complete round."""
    d = partial(diag, step=rf.step, round=rf.round)
    verdict = awaited(rf)
    out = verdict.diagnostics
    if rf.expectation is not None:
        tags = verdict.expected_tags
        for tag in verdict.awaiting:
            text = (f"Reviewer {tag} wrote no per-finding files" if tag.endswith("-claude")
                    else f"Reviewer {tag} produced no output")
            out.append(d("expected_tag_no_output", text, tag=tag, path=rf.path))
        routed = rf.expectation.routed
        all_tags = sorted({f.tag for f in rf.files if f.tag})
        for tag in all_tags:
            if tag not in routed:
                out.append(d("unrouted_tag", f"tag {tag} is not routed for this step "
                             f"(expected: {', '.join(tags)})", tag=tag, path=rf.path))
    sidecars = {(f.tag, f.fnum): f for f in rf.files if f.kind is Kind.SIDECAR}
    findings = [f for f in rf.files if f.kind is Kind.FINDING]
    if rf.verifier_enabled and not rf.waived and (rf.verified or rf.require_sidecars):
        level = "warning" if rf.step in SIDECAR_WARN_STEPS else "error"
        for f in sorted(findings, key=lambda f: f.name):
            if (f.tag, f.fnum) not in sidecars:
                ident = f.finding_id or f"F{f.fnum:02d}"
                out.append(d("sidecar_missing", f"Sidecar missing for finding {f.tag}.{ident}",
                             level=level, file=f.name, path=_in(rf, f.name), tag=f.tag))
    if rf.verified:
        problem = _totals_problem(rf, findings, sidecars)
        if problem:
            out.append(d("verified_totals_mismatch", problem, path=rf.verified_path or rf.path))
    return verdict


def recount(findings: list[FileFacts], sidecars: dict[Any, FileFacts],
            cleans: int) -> dict[str, int]:
    scored = sum(1 for s in sidecars.values() if isinstance(s.score, int))
    failed = sum(1 for s in sidecars.values() if s.score == VERIFY_FAILED)
    dropped = 0
    for f in findings:
        s = sidecars.get((f.tag, f.fnum))
        if (s is not None and isinstance(s.score, int) and s.score < KEEP_THRESHOLD
                and f.change_type in AUTO_APPLY and not f.escalated):
            dropped += 1
    return {"scored": scored, "kept": len(findings) - dropped, "dropped": dropped,
            "failed": failed, "clean": cleans}


def _totals_problem(rf: RoundFacts, findings: list[FileFacts],
                    sidecars: dict[Any, FileFacts]) -> str | None:
    name = f"round-{rf.round:02d}-verified.md"
    if rf.verified_error:
        return f"{name}: totals cannot be read ({rf.verified_error})"
    totals = rf.verified_totals or {}
    counted = recount(findings, sidecars, sum(1 for f in rf.files if f.kind is Kind.CLEAN))
    wrong = []
    for key in TOTAL_KEYS:
        said = totals.get(key)
        if said is None:
            wrong.append(f"{key} missing (recount {counted[key]})")
        elif isinstance(said, bool) or not isinstance(said, int) or said != counted[key]:
            wrong.append(f"{key} says {said!r:.20}, recount {counted[key]}")
    return f"{name} totals differ from a recount: " + "; ".join(wrong) if wrong else None


def _in(rf: RoundFacts, name: str) -> str:
    return f"{rf.path}/{name}" if rf.path not in ("", ".") else name
