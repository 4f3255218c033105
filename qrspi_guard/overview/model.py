"""The overview as plain data: runs, steps, rounds, reviewers, findings and halts.

Everything a view shows is here, already made safe where it came from a file (each
string read from a finding is one escaped line, cut to a bound); :func:`to_dict` is the
``status --format json`` document, keys in a fixed order (documented in docs/overview.md).
"""

from __future__ import annotations

from typing import Any

from qrspi_guard.contract.generations import CONTRACT
from qrspi_guard.records import field, record

CHANGE_TYPES = frozenset(CONTRACT.change_types)

#: the version of the ``status --format json`` document
VERSION = 1


@record
class FindingView:
    """One finding file of a round, as its frontmatter says (display only)."""

    name: str  #: the file name inside the round directory
    tag: str
    finding_id: str | None = None
    severity: str | None = None
    change_type: str | None = None
    score: int | None = None  #: the verifier sidecar's score, when readable
    verdict: str | None = None  #: "kept" or "dropped" where the verifier scored it


@record
class ReviewerView:
    """What one reviewer tag wrote in a round."""

    tag: str
    #: findings | clean | awaiting | nothing | error
    state: str
    findings: int = 0
    error: str | None = None  #: the first error's cause, in state "error"
    expected: bool = True


@record
class HaltView:
    """An error diagnostic with the catalogue's fix."""

    cause: str
    message: str
    path: str
    fix: str
    line: int | None = None
    tag: str | None = None
    step: str | None = None
    round: int | None = None
    level: str = "error"


@record
class RoundView:
    path: str
    step: str  #: the row name (`design`, `tasks/task-01`)
    round: int
    status: str  #: ok | pending | halt
    protocol: str
    errors: int = 0
    warnings: int = 0
    awaiting: list[str] = field(default_factory=list)
    expected_tags: list[str] = field(default_factory=list)
    reviewers: list[ReviewerView] = field(default_factory=list)
    findings: list[FindingView] = field(default_factory=list)
    halts: list[HaltView] = field(default_factory=list)
    #: watch: the quiet time (--settle seconds) that completed the round, when it did
    quiet: float | None = None

    @property
    def verified(self) -> bool:
        return any(f.verdict is not None for f in self.findings)

    @property
    def kept(self) -> int:
        return sum(1 for f in self.findings if f.verdict == "kept")

    @property
    def dropped(self) -> int:
        return sum(1 for f in self.findings if f.verdict == "dropped")

    def by_change_type(self) -> dict[str, int]:
        """Findings per change_type (one not in the enum counts as "other")."""
        out: dict[str, int] = {}
        for f in self.findings:
            key = f.change_type if f.change_type in CHANGE_TYPES else "other"
            out[key] = out.get(key, 0) + 1
        return dict(sorted(out.items()))


@record
class StepView:
    name: str
    rounds: list[RoundView] = field(default_factory=list)  #: by round number

    @property
    def current(self) -> RoundView:
        return self.rounds[-1]

    def series(self) -> list[int]:
        return [len(r.findings) for r in self.rounds]


@record
class RunView:
    path: str  #: the artifact directory (or the directory holding the rounds)
    steps: list[StepView] = field(default_factory=list)

    def columns(self) -> list[int]:
        return sorted({r.round for s in self.steps for r in s.rounds})


@record
class Overview:
    runs: list[RunView] = field(default_factory=list)
    #: error diagnostics outside any round (a config file, a file named outside a round)
    other_halts: list[HaltView] = field(default_factory=list)
    files: int = 0
    errors: int = 0
    warnings: int = 0

    def rounds(self) -> list[RoundView]:
        return [r for run in self.runs for s in run.steps for r in s.rounds]

    def halts(self) -> list[HaltView]:
        return [h for r in self.rounds() for h in r.halts] + self.other_halts


def _halt(h: HaltView) -> dict[str, Any]:
    out: dict[str, Any] = {"cause": h.cause, "level": h.level, "path": h.path}
    if h.line is not None:
        out["line"] = h.line
    if h.tag is not None:
        out["tag"] = h.tag
    out["message"] = h.message
    out["fix"] = h.fix
    return out


def _round(r: RoundView) -> dict[str, Any]:
    return {
        "round": r.round, "path": r.path, "status": r.status, "protocol": r.protocol,
        "errors": r.errors, "warnings": r.warnings, "awaiting": r.awaiting,
        "expected_tags": r.expected_tags,
        "reviewers": [{"tag": v.tag, "state": v.state, "findings": v.findings,
                       "error": v.error, "expected": v.expected} for v in r.reviewers],
        "findings": [{"file": f.name, "tag": f.tag, "finding_id": f.finding_id,
                      "severity": f.severity, "change_type": f.change_type,
                      "score": f.score, "verdict": f.verdict} for f in r.findings],
        "change_types": r.by_change_type(),
        "verifier": {"kept": r.kept, "dropped": r.dropped} if r.verified else None,
        "halts": [_halt(h) for h in r.halts],
    }


def to_dict(ov: Overview) -> dict[str, Any]:
    """The ``status --format json`` document."""
    return {
        "version": VERSION,
        "runs": [{"path": run.path, "rounds": run.columns(), "steps": [
            {"step": s.name, "series": s.series(), "current": s.current.round,
             "rounds": [_round(r) for r in s.rounds]} for s in run.steps]}
            for run in ov.runs],
        "other_halts": [_halt(h) for h in ov.other_halts],
        "summary": {"rounds": len(ov.rounds()), "files": ov.files, "errors": ov.errors,
                    "warnings": ov.warnings,
                    "halted_rounds": sum(1 for r in ov.rounds() if r.status == "halt")},
    }
