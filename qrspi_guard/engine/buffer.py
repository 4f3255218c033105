"""``check --stdin-filename PATH -``: judge standard input as the file at PATH.

The editor-integration form (ruff, eslint): the buffer an editor holds is judged as if
it were on disk at PATH, with the rest of its round as it is on disk, exactly as
``check PATH`` would judge it after a save, and only the buffer's own diagnostics are
reported (as ruff reports only the buffer): not the round's other files, not the
round's completeness, not the run's config.md. PATH need not exist yet, nor its round
directory. No printing.
"""

from __future__ import annotations

import os

from qrspi_guard.contract.layout import OUTPUT_KINDS, classify
from qrspi_guard.contract.runconfig import Overrides
from qrspi_guard.engine.configs import RunConfigs
from qrspi_guard.engine.discover import round_of_file, with_step
from qrspi_guard.engine.entries import Context
from qrspi_guard.engine.results import CheckResult, Keep, kept
from qrspi_guard.engine.roundverdict import evaluate_round
from qrspi_guard.records import replace
from qrspi_guard.rules.facts import Place
from qrspi_guard.rules.filejudge import judge_file


def check_buffer(path: str, data: bytes, overrides: Overrides | None = None,
                 keep: Keep | None = None) -> CheckResult:
    """The result of ``check PATH`` with PATH's bytes replaced by *data*."""
    overrides = overrides or Overrides()
    name = os.path.basename(path)
    parent = os.path.dirname(os.path.normpath(path)) or "."
    ref = round_of_file(os.path.join(parent, name), overrides.step)
    result = CheckResult()
    if ref is not None and os.path.normpath(ref.round_dir) == os.path.normpath(parent):
        ref = with_step(ref, overrides.step)
        ctx = Context.for_check(overrides)
        runs, _ = RunConfigs(overrides, ctx.sides, keep).for_rounds([ref])
        rr = evaluate_round(ref, runs[0], overrides, ctx=ctx, overlay={name: data}, keep=keep)
        mine = [d for d in rr.diagnostics if d.file == name]
        rr = replace(rr, diagnostics=mine, run=replace(rr.run, diagnostics=[]), files=1,
                     status="halt" if any(d.level == "error" for d in mine) else "ok")
        result.rounds.append(rr)
        result.files = 1
        return result
    if classify(name).kind in OUTPUT_KINDS:  # a finding outside any round
        result.files = 1
        result.outside[0] = kept(judge_file(classify(name), data, Place(path, None, None)
                                            ).diagnostics, keep)
        return result
    result.not_in_round.append(path)
    return result
