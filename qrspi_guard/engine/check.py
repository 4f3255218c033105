"""``check``'s core: paths in, a :class:`CheckResult` out. No printing, no exits.

Rounds are judged one at a time (a round's parsed files are dropped before the next is
read), large trees are shared with forked workers (:mod:`.parallel`), and the result
is the same, in the same order, whatever the number of processes.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from qrspi_guard.contract.diagnostics import Diagnostic
from qrspi_guard.contract.layout import classify
from qrspi_guard.contract.runconfig import Overrides
from qrspi_guard.engine.configs import RunConfigs
from qrspi_guard.engine.discover import pseudo_round, round_of_dir
from qrspi_guard.engine.entries import Context
from qrspi_guard.engine.parallel import jobs, ordered_map
from qrspi_guard.engine.plan import plan
from qrspi_guard.engine.results import CheckResult, Keep, RoundResult, kept
from qrspi_guard.engine.roundverdict import evaluate_round
from qrspi_guard.parse.reader import ReadFailure, read_bytes
from qrspi_guard.records import fields
from qrspi_guard.rules.facts import Place

_SENT = tuple(name for name in fields(RoundResult) if name != "run")


def check_paths(paths: Iterable[str], overrides: Overrides | None = None,
                keep: Keep | None = None) -> CheckResult:
    """Check every round at or below *paths* (default ``.``), leaving out what *keep*
    (the rule selection) does not report. Raises
    :class:`~qrspi_guard.errors.PathNotFound` and
    :class:`~qrspi_guard.errors.UnreadablePath`."""
    overrides = overrides or Overrides()
    the_plan = plan(list(paths) or ["."], overrides)
    ctx = Context.for_check(overrides)
    refs = list(the_plan.rounds.values())
    runs, runs_at = RunConfigs(overrides, ctx.sides, keep).for_rounds(refs)
    result = CheckResult(runs_at=runs_at, not_in_round=the_plan.not_in_round)
    outside: list[Diagnostic] = kept(list(the_plan.layout), keep)
    for path in the_plan.loose:
        result.files += 1
        outside.extend(kept(_judge_loose(path), keep))
    if outside:
        result.outside[0] = outside
    if jobs(len(refs)) > 1:
        assert ctx.resolver is not None
        ctx.resolver.prepare(refs)  # decided once, shared by the forked workers
    shared: dict[tuple[str, ...], list[str]] = {}

    def one(i: int) -> RoundResult:
        return evaluate_round(refs[i], runs[i], overrides, ctx=ctx, keep=keep)

    def encode(rr: RoundResult) -> dict[str, Any]:
        return {name: getattr(rr, name) for name in _SENT}

    def decode(i: int, state: dict[str, Any]) -> RoundResult:
        return RoundResult(run=runs[i], **state)

    for rr in ordered_map(one, len(refs), encode, decode):
        # Rounds repeat the same names and tags: keep one copy of each list, so that
        # memory stays flat however many rounds there are.
        rr.file_names = shared.setdefault(tuple(rr.file_names), rr.file_names)
        rr.expected_tags = shared.setdefault(tuple(rr.expected_tags), rr.expected_tags)
        rr.reported_tags = shared.setdefault(tuple(rr.reported_tags), rr.reported_tags)
        result.rounds.append(rr)
        result.files += rr.files
    return result


def _judge_loose(path: str) -> list[Diagnostic]:
    """A reviewer-output file named outside any round: its name rule and the per-file
    rules, never ignored (generations.md §8)."""
    from qrspi_guard.engine.entries import judge_entry

    directory, name = os.path.split(path)
    ref = pseudo_round(directory or ".", None, None)
    report, problem = judge_entry(ref, classify(name), os.path.islink(path), _LooseReader(path),
                                  Place(ref.round_dir, None, None))
    diags = [problem] if problem is not None else []
    return diags + (report.diagnostics if report is not None else [])


class _LooseReader:
    def __init__(self, path: str) -> None:
        self.path = path

    def read(self, name: str) -> bytes | ReadFailure:
        return read_bytes(self.path)


def check_round_dir(round_dir: str, overrides: Overrides | None = None,
                    keep: Keep | None = None) -> RoundResult | None:
    """Evaluate a single round directory (embedders; commands ask
    :meth:`qrspi_guard.judge.Judge.round`)."""
    overrides = overrides or Overrides()
    ref = round_of_dir(round_dir, overrides.step)
    if ref is None:
        return None
    ctx = Context.for_check(overrides)
    runs, _ = RunConfigs(overrides, ctx.sides, keep).for_rounds([ref])
    return evaluate_round(ref, runs[0], overrides, ctx=ctx, keep=keep)
