"""A check's result holds each diagnostic once (engine/results.py): a round's in its
round, a run's in the run its rounds share (reported by the first round judged with
it), the others in ``outside``; ``diagnostics`` lists them all, in order."""

from __future__ import annotations

from pathlib import Path

from qrspi_guard.contract.runconfig import Overrides
from qrspi_guard.engine import CheckResult, check_paths
from qrspi_guard.judge import merge
from tests.support import Run


def _tree(root: Path) -> tuple[Path, Path]:
    """A run without config.md (a run-level diagnostic) with two rounds, each with a
    finding that breaks a rule, and a finding file outside any round."""
    run = Run(root / "art")
    for n in (1, 2):
        run.finding("goals", n, "quality-claude", severity="urgent")
    loose = root / "loose" / "quality-claude.finding-F01.md"
    loose.parent.mkdir(parents=True)
    loose.write_text("---\nfinding_id: R1-F01\n---\n")
    return run.root, loose


def _check(*paths: Path) -> CheckResult:
    return check_paths([str(p) for p in paths], Overrides())


def test_a_runs_diagnostics_are_reported_once_though_its_rounds_share_them(
        tmp_path: Path) -> None:
    art, loose = _tree(tmp_path)
    result = _check(loose, art)
    first, second = result.rounds
    assert first.run.diagnostics and first.run.diagnostics is second.run.diagnostics
    assert result.diagnostics == (result.outside[0] + first.run.diagnostics
                                  + first.diagnostics + second.diagnostics)
    assert [d.cause for d in result.diagnostics].count("config_missing") == 1
    assert all(d.round is None for d in result.outside[0]) and result.outside[0]
    assert result.count("error") == sum(d.level == "error" for d in result.diagnostics) > 0


def test_no_diagnostic_is_held_twice(tmp_path: Path) -> None:
    art, loose = _tree(tmp_path)
    result = _check(loose, art)
    held = [d for diags in result.outside.values() for d in diags]
    held += [d for i in result.runs_at for d in result.rounds[i].run.diagnostics]
    held += [d for rr in result.rounds for d in rr.diagnostics]
    assert sorted(map(id, held)) == sorted(map(id, result.diagnostics))
    assert len(set(map(id, held))) == len(held)


def test_merged_checks_keep_each_checks_diagnostics_after_the_ones_before(
        tmp_path: Path) -> None:
    one = _check(*reversed(_tree(tmp_path / "one")))
    two = _check(*reversed(_tree(tmp_path / "two")))
    both = merge([one, two])
    assert both.diagnostics == one.diagnostics + two.diagnostics
    assert sorted(both.outside) == [0, len(one.rounds)]
    assert both.count("error") == one.count("error") + two.count("error")


def test_what_is_no_rounds_own_is_the_outside_and_the_runs_in_order(tmp_path: Path) -> None:
    art, loose = _tree(tmp_path)
    result = _check(loose, art)
    first = result.rounds[0]
    assert result.beyond_rounds() == result.outside[0] + first.run.diagnostics
    own = {id(d) for rr in result.rounds for d in rr.diagnostics}
    assert result.beyond_rounds() == [d for d in result.diagnostics if id(d) not in own]
