"""Where a round sits, as rules: the number of a directory that is not round-NN (from
its findings' `finding_id`s, generations.md §8), a suffixed round directory, and a step
that config.md's `route` does not list."""

from __future__ import annotations

import os
from collections import Counter

from qrspi_guard.contract.diagnostics import Diagnostic, diag
from qrspi_guard.contract.digits import bounded_number
from qrspi_guard.contract.layout import RoundRef
from qrspi_guard.contract.runconfig import RunConfig
from qrspi_guard.rules.facts import FileFacts


def _on_route(step: str, route: tuple[str, ...]) -> bool:
    if step == "integration":
        return bool({"integration", "integrate", "implement-gate"} & set(route))
    return step in route


def round_from_findings(ref: RoundRef, files: list[FileFacts]
                         ) -> tuple[int | None, Diagnostic | None]:
    """The R-number the findings' `finding_id`s agree on (disagreement: round_mismatch)."""
    said: Counter[int] = Counter()
    for f in files:
        if f.finding_id:
            number = bounded_number(f.finding_id[1:].split("-", 1)[0])
            if number is not None:
                said[number] += 1
    if not said:
        return None, None
    best = min(said, key=lambda n: (-said[n], n))
    if len(said) == 1:
        return best, None
    shown = ", ".join(f"R{n} ({c} file(s))" for n, c in sorted(said.items()))
    return best, diag("round_mismatch", f"the findings of this directory disagree on the "
                      f"round: {shown}; pass --round N", path=ref.round_dir, step=ref.step,
                      round=best, field="finding_id")


def suffixed_dir(ref: RoundRef) -> Diagnostic:
    """A `round-NN-<suffix>/` directory: judged with the per-file rules only."""
    return diag("bad_round_dir_name", f"directory {os.path.basename(ref.round_dir)!r}"
                " is not round-NN (its files are judged with the per-file rules, "
                f"as round {ref.round})", path=ref.round_dir, step=ref.step,
                round=ref.round)


def off_route(ref: RoundRef, run: RunConfig) -> Diagnostic | None:
    """`step_not_on_route`: a step round whose step the run's `route` does not list."""
    if (run.route is not None and ref.step and ref.kind == "step"
            and not _on_route(ref.step, run.route)):
        return diag("step_not_on_route", f"step {ref.step} is not on the run's route "
                    f"({', '.join(run.route)})", path=ref.round_dir, step=ref.step,
                    round=ref.round)
    return None
