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
from qrspi_guard.contract.layout import RoundRef, classify
from qrspi_guard.contract.runconfig import Overrides, RunConfig
from qrspi_guard.engine.discover import pseudo_round, round_of_dir
from qrspi_guard.engine.entries import Context
from qrspi_guard.engine.history import ConfigHistory
from qrspi_guard.engine.inputs import read_anchor
from qrspi_guard.engine.parallel import jobs, ordered_map
from qrspi_guard.engine.plan import plan
from qrspi_guard.engine.results import CheckResult, Keep, RoundResult, kept
from qrspi_guard.engine.rounds import evaluate_round
from qrspi_guard.engine.runconfig import config_path, missing_reason, read_config_bytes
from qrspi_guard.parse.reader import ReadFailure, read_bytes
from qrspi_guard.records import fields
from qrspi_guard.rules import bookkeeping
from qrspi_guard.rules.config import config_from
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
    runs, first_use = RunConfigs(overrides, ctx, keep).for_rounds(refs)
    result = CheckResult(not_in_round=the_plan.not_in_round)
    diags: list[Diagnostic] = kept(list(the_plan.layout), keep)
    for path in the_plan.loose:
        result.files += 1
        diags.extend(kept(_judge_loose(path), keep))
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

    for i, rr in enumerate(ordered_map(one, len(refs), encode, decode)):
        diags.extend(first_use.get(i, ()))
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


def _judge_loose(path: str) -> list[Diagnostic]:
    """A reviewer-output file named outside any round: its name rule and the per-file
    rules, never ignored (generations.md §8)."""
    from qrspi_guard.engine.entries import judge_entry

    directory, name = os.path.split(path)
    ref = pseudo_round(directory or ".", None, None)
    report, problem = judge_entry(ref, classify(name), os.path.islink(path), _LooseReader(path),
                                  Place(path, None, None))
    diags = [problem] if problem is not None else []
    return diags + (report.diagnostics if report is not None else [])


class _LooseReader:
    def __init__(self, path: str) -> None:
        self.path = path

    def read(self, name: str) -> bytes | ReadFailure:
        return read_bytes(self.path)


class RunConfigs:
    """Each round's configuration: the working tree's config.md, or the one as of the
    round's commit (generations.md §7); parsed once per (run, source)."""

    def __init__(self, overrides: Overrides, ctx: Context, keep: Keep | None = None) -> None:
        self.overrides = overrides
        self.ctx = ctx
        self.keep = keep
        self._real: dict[str, str] = {}

    def _key(self, artifact_dir: str | None) -> str | None:
        if artifact_dir is None:
            return None
        got = self._real.get(artifact_dir)
        if got is None:
            got = self._real[artifact_dir] = os.path.realpath(artifact_dir)
        return got

    def for_rounds(self, refs: list[RoundRef]
                   ) -> tuple[list[RunConfig], dict[int, list[Diagnostic]]]:
        """(each round's RunConfig, {round index: the run diagnostics first seen there}):
        config diagnostics are reported once per distinct config text."""
        commits = self._commits(refs)
        blobs: dict[tuple[str, str], bytes] = {}
        if commits:
            wanted = {(path, sha) for path, sha in commits.values()}
            blobs = ConfigHistory().blobs(sorted(wanted))
        parsed: dict[tuple[str | None, str], RunConfig] = {}
        texts: dict[tuple[str | None, bytes | None], bool] = {}
        worktree: dict[str | None, bytes | None] = {}
        runs: list[RunConfig] = []
        first_use: dict[int, list[Diagnostic]] = {}
        for i, ref in enumerate(refs):
            key = self._key(ref.artifact_dir)
            path = config_path(ref.artifact_dir, self.overrides)
            source, data = "worktree", None
            commit = commits.get(i)
            if commit is not None and commit in blobs:
                source, data = commit[1], blobs[commit]
            else:
                if key not in worktree:
                    worktree[key] = read_config_bytes(path)
                data = worktree[key]
            cfg = parsed.get((key, source))
            if cfg is None:
                why = missing_reason(path) if data is None else ""
                cfg = parsed[(key, source)] = config_from(path, ref.artifact_dir, data,
                                                          self.overrides, source, why=why)
                if self.keep is not None and cfg.diagnostics:
                    cfg.diagnostics = kept(cfg.diagnostics, self.keep)
                if (key, data) not in texts:
                    texts[(key, data)] = True
                    first_use[i] = cfg.diagnostics
            runs.append(cfg)
        return runs, first_use

    def _commits(self, refs: list[RoundRef]) -> dict[int, tuple[str, str]]:
        """{round index: (config.md path, SHA)} for rounds with a well-formed commit anchor
        in a run whose config is not overridden."""
        if self.overrides.config_file is not None:
            return {}
        out: dict[int, tuple[str, str]] = {}
        for i, ref in enumerate(refs):
            if ref.artifact_dir is None:
                continue
            data = read_anchor(ref, self.ctx.sides)
            if data is None or isinstance(data, ReadFailure):
                continue
            sha, _ = bookkeeping.commit_anchor(data, per_task=ref.is_task)
            if sha is not None:
                path = config_path(ref.artifact_dir, self.overrides)
                assert path is not None
                out[i] = (path, sha)
        return out


def check_round_dir(round_dir: str, overrides: Overrides | None = None,
                    keep: Keep | None = None) -> RoundResult | None:
    """Evaluate a single round directory (embedders; commands ask
    :meth:`qrspi_guard.judge.Judge.round`)."""
    overrides = overrides or Overrides()
    ref = round_of_dir(round_dir, overrides.step)
    if ref is None:
        return None
    ctx = Context.for_check(overrides)
    runs, _ = RunConfigs(overrides, ctx, keep).for_rounds([ref])
    return evaluate_round(ref, runs[0], overrides, ctx=ctx, keep=keep)
