"""Helpers shared by the generations.md tests (tests/test_generations*.py).

Builders for fan-in and apply-fix rounds on a real filesystem and a thin wrapper over
the engine's ``check_paths`` with :class:`~qrspi_guard.contract.runconfig.Overrides`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from qrspi_guard.contract.diagnostics import Diagnostic
from qrspi_guard.contract.runconfig import Overrides
from qrspi_guard.engine import CheckResult, check_paths
from tests.support import FINDING, Run

#: a run whose verifier is on (the conftest default switches it off)
VERIFIER_ON = "second_reviewer: false\nverifier_enabled: true\n"
AUDIT = ".verifier-fan-in-audit.json"
KEPT = "kept-findings.txt"


def new_run(root: Path, config: str = VERIFIER_ON) -> Run:
    return Run(root / "art").config(config)


def check(*paths: Path | str, **overrides: object) -> CheckResult:
    return check_paths([str(p) for p in paths], Overrides(**overrides))  # type: ignore[arg-type]


def causes(result: CheckResult, file: str | None = None) -> list[str]:
    """Every diagnostic's cause (of one file when *file* is given), sorted."""
    return sorted(d.cause for d in result.diagnostics if file is None or d.file == file)


def of(result: CheckResult, cause: str) -> list[Diagnostic]:
    return [d for d in result.diagnostics if d.cause == cause]


def one(result: CheckResult, cause: str) -> Diagnostic:
    got = of(result, cause)
    assert len(got) == 1, (cause, [(d.cause, d.file, d.message) for d in result.diagnostics])
    return got[0]


def sidecar_md(score: object = 90, status: str | None = "passed", extra: str = "",
               body: str = "The citation holds: the line says what the finding claims.\n"
               ) -> str:
    """A fan-in `.score.md` sidecar (generations.md §2); None leaves a key out."""
    lines = []
    if status is not None:
        lines.append(f"verifier_status: {status}")
    if score is not None:
        lines.append(f"score: {score}")
    return "---\n" + "".join(f"{x}\n" for x in lines) + extra + "---\n\n" + body


def finding_text(tag: str, n: int, change_type: str | None = "correctness", round_no: int = 1,
                 step: str = "design", change_type_line: str | None = None) -> str:
    """A valid finding; *change_type* None leaves the key out, *change_type_line*
    replaces its whole line."""
    text = FINDING.format(round=round_no, n=n, tag=tag, step=step, severity="high",
                          change_type=change_type or "correctness", artifact=step)
    if change_type_line is not None:
        text = text.replace(f"change_type: {change_type or 'correctness'}\n",
                            change_type_line + "\n" if change_type_line else "")
    elif change_type is None:
        text = text.replace("change_type: correctness\n", "")
    return text


def put(directory: Path, name: str, content: str | bytes) -> Path:
    p = directory / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(content.encode() if isinstance(content, str) else content)
    return p


def audit_json(scored: int, kept: int, dropped: int, halts: Iterable[tuple[str, str]] = (),
               thresholds: dict[str, int] | None = None, **extra: object) -> str:
    """The audit as verifier-fan-in.sh writes it (jq -n: 2-space indent, key order)."""
    doc: dict[str, object] = {"scored": scored, "kept": kept, "dropped": dropped,
                              "halts": [{"finding_id": f, "cause": c} for f, c in halts],
                              "thresholds": thresholds or {"style": 80, "clarity": 80,
                                                           "correctness": 70}}
    doc.update(extra)
    return json.dumps(doc, indent=2) + "\n"


def kept_txt(round_dir: Path, names: Iterable[str],
             machine: str = "/Users/someone/code/run") -> str:
    """kept-findings.txt: absolute paths from the machine that ran the fan-in."""
    return "".join(f"{machine}/{round_dir.name}/{n}\n" for n in names)


def fanin_round(run: Run, step: str, round_no: int,
                findings: Iterable[tuple[str, int, str, object]],
                cleans: Iterable[str] = ()) -> Path:
    """A fan-in round: each (tag, F number, change_type, score) is a finding and its
    `.score.md` sidecar (score None: no sidecar). No audit or kept list is written."""
    d = run.round_dir(step, round_no)
    for tag, n, ct, score in findings:
        put(d, f"{tag}.finding-F{n:02d}.md", finding_text(tag, n, ct, round_no, step))
        if score is not None:
            put(d, f"{tag}.finding-F{n:02d}.score.md", sidecar_md(score))
    for tag in cleans:
        run.clean(step, round_no, tag)
    return d
