"""Judged rounds in, the overview out: rounds grouped by run and step, steps in the
protocol's order, each round's reviewers, findings and halts.

The only input is what the judge returned (:class:`~qrspi_guard.engine.results.CheckResult`
or the :class:`~qrspi_guard.engine.results.RoundResult` list ``watch`` keeps); the
findings' fields are read for display by :mod:`.details`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from qrspi_guard.contract.causes import CATALOGUE
from qrspi_guard.contract.diagnostics import Diagnostic
from qrspi_guard.contract.generations import Thresholds
from qrspi_guard.contract.layout import CLEAN_KINDS, Kind, classify_cached
from qrspi_guard.contract.runconfig import Overrides
from qrspi_guard.engine.results import CheckResult, RoundResult
from qrspi_guard.overview import details
from qrspi_guard.overview.model import (
    FindingView,
    HaltView,
    Overview,
    ReviewerView,
    RoundView,
    RunView,
    StepView,
)
from qrspi_guard.settings import CommandLine
from qrspi_guard.textsafe import one_line

#: the protocol's steps in run order (report.md); task rows go where "tasks" is
ORDER: tuple[str, ...] = ("goals", "questions", "research", "design", "phasing",
                          "structure", "parallelize", "replan", "plan", "tasks",
                          "implement-gate", "integrate", "integration", "test")
_TASK_RE = re.compile(r"tasks/task-([0-9]+)")


def step_key(name: str) -> tuple[int, int, str]:
    """Sort key of a row: protocol order, tasks by number, unknown steps last by name."""
    m = _TASK_RE.fullmatch(name)
    if m:
        return (ORDER.index("tasks"), int(m.group(1)[:9]), name)
    if name in ORDER:
        return (ORDER.index(name), 0, name)
    return (len(ORDER), 0, name)


def halt_of(d: Diagnostic) -> HaltView:
    entry = CATALOGUE.get(d.cause)
    return HaltView(d.cause, one_line(d.message), d.path, entry.fix if entry else "",
                    d.line, d.tag, d.step, d.round, d.level)


def _row(rr: RoundResult) -> str:
    step_dir = os.path.normpath(rr.ref.step_dir)
    base = os.path.basename(step_dir)
    if rr.ref.is_task and os.path.basename(os.path.dirname(step_dir)) == "tasks":
        return "tasks/" + base
    return base or (rr.ref.step or "?")


def run_path(rr: RoundResult) -> str:
    if rr.ref.artifact_dir is not None:
        return rr.ref.artifact_dir
    up = os.path.dirname(os.path.normpath(rr.ref.step_dir))
    if rr.ref.is_task:
        up = os.path.dirname(up)
    return up or "."


def reviewers(rr: RoundResult) -> list[ReviewerView]:
    counts: dict[str, int] = {}
    clean: set[str] = set()
    for name in rr.file_names:
        fname = classify_cached(name)
        if fname.tag is None:
            continue
        if fname.kind is Kind.FINDING:
            counts[fname.tag] = counts.get(fname.tag, 0) + 1
        elif fname.kind in CLEAN_KINDS:
            clean.add(fname.tag)
    errors: dict[str, str] = {}
    for d in rr.diagnostics:
        if d.level != "error":
            continue
        tag = d.tag
        if tag is None and d.file:
            tag = classify_cached(d.file).tag
        if tag is not None:
            errors.setdefault(tag, d.cause)
    tags = list(rr.expected_tags)
    tags += sorted(t for t in {*counts, *clean, *rr.reported_tags} if t not in tags)
    out = []
    for tag in tags:
        n = counts.get(tag, 0)
        if tag in errors:
            state = "error"
        elif n:
            state = "findings"
        elif tag in clean:
            state = "clean"
        elif tag in rr.awaiting:
            state = "awaiting"
        else:
            state = "nothing"
        out.append(ReviewerView(one_line(tag), state, n, errors.get(tag),
                                tag in rr.expected_tags))
    return out


def round_view(rr: RoundResult, thresholds: Thresholds | None = None,
               quiet: float | None = None,
               found: list[FindingView] | None = None) -> RoundView:
    """One judged round's view (*found*: its findings read already)."""
    diags = rr.diagnostics
    if found is None:
        found = details.findings(rr.ref.round_dir, rr.file_names, rr.protocol, thresholds)
    return RoundView(
        path=rr.ref.round_dir, step=_row(rr), round=rr.ref.round or 0, status=rr.status,
        protocol=rr.protocol,
        errors=sum(1 for d in rr.all_diagnostics if d.level == "error"),
        warnings=sum(1 for d in rr.all_diagnostics if d.level == "warning"),
        awaiting=[one_line(t) for t in rr.awaiting],
        expected_tags=[one_line(t) for t in rr.expected_tags],
        reviewers=reviewers(rr),
        findings=found,
        halts=[halt_of(d) for d in diags if d.level == "error"],
        quiet=quiet)


def assemble(views: Iterable[tuple[str, RoundView]]) -> list[RunView]:
    """(run path, round view) pairs -> runs (in first-seen order), steps, rounds."""
    runs: dict[str, dict[str, list[RoundView]]] = {}
    for run, view in views:
        runs.setdefault(run, {}).setdefault(view.step, []).append(view)
    out = []
    for path, steps in runs.items():
        rows = [StepView(name, sorted(rounds, key=lambda r: (r.round, r.path)))
                for name, rounds in sorted(steps.items(), key=lambda kv: step_key(kv[0]))]
        out.append(RunView(path, rows))
    return out


def overview(result: CheckResult, thresholds: Thresholds | None = None) -> Overview:
    """The overview of everything *result* judged."""
    unread = [rr for rr in result.rounds if rr.file_names and not rr.facts]
    read = iter(details.every_round([(rr.ref.round_dir, rr.file_names, rr.protocol)
                                     for rr in unread], thresholds))
    found = [details.from_facts(rr.ref.round_dir, rr.facts, rr.protocol, thresholds)
             if rr.facts or not rr.file_names else next(read) for rr in result.rounds]
    views = [(run_path(rr), round_view(rr, thresholds, None, f))
             for rr, f in zip(result.rounds, found, strict=True)]
    other = [halt_of(d) for d in result.beyond_rounds() if d.level == "error"]
    return Overview(assemble(views), other, result.files, result.count("error"),
                    result.count("warning"))


def live_overview(results: Iterable[tuple[RoundResult, float | None]],
                  thresholds: Thresholds | None = None) -> Overview:
    """The overview of the rounds ``watch`` keeps (each with its quiet time, if a
    quiet time completed it)."""
    rounds = list(results)
    views = [(run_path(rr), round_view(rr, thresholds, quiet)) for rr, quiet in rounds]
    errors = sum(v.errors for _, v in views)
    warnings = sum(v.warnings for _, v in views)
    return Overview(assemble(views), [], sum(rr.files for rr, _ in rounds), errors, warnings)


def judged(paths: Iterable[str], cli: CommandLine | None = None,
           base: Overrides | None = None) -> Overview:
    """The overview of every round under *paths* (default ``.``), each path judged by
    the one judge under the configuration found from it (cli.md), as ``check`` judges."""
    from qrspi_guard.judge import Judge
    from qrspi_guard.records import replace

    base = replace(base or Overrides(), keep_facts=True)  # the findings, as judged
    total = Overview()
    for path in list(paths) or ["."]:
        judge = Judge.for_path(path, cli=cli, base=base)
        one = overview(judge.paths([path]), judge.overrides.thresholds)
        total.runs += one.runs
        total.other_halts += one.other_halts
        total.files += one.files
        total.errors += one.errors
        total.warnings += one.warnings
    return total
