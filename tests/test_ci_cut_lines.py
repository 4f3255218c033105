"""CI output says what GitHub's limits left out, for every annotation type, and where in
this job the full list is (the step's log, the file --output wrote)."""

from __future__ import annotations

from pathlib import Path

import pytest

from qrspi_guard.output.github import SUMMARY_LIMIT
from tests.support import FIXTURES, Run, run_main


def _runs(tmp_path: Path, n: int, config: str) -> Path:
    """*n* runs with a valid goals round each, under *config*."""
    for i in range(n):
        run = Run(tmp_path / "tree" / f"run-{i:02d}").config(config)
        run.finding("goals", 1, "quality-claude")
        run.clean("goals", 1, "scope-claude")
    return tmp_path / "tree"


@pytest.mark.parametrize(("config", "kind", "said"), [
    # 12 runs naming the older key: 12 infos, GitHub's notices (13 with the cut notice)
    ("second_reviewer: false\ncodex_reviews: false\nverifier_enabled: false\n", "notice",
     "GitHub annotated only 10 of 13 notices; all are below."),
    # 12 runs without verifier_enabled: 12 warnings (and the cut notice itself)
    ("second_reviewer: false\n", "warning", "GitHub annotated only 10 of 12 warnings; all "
     "are below."),
])
def test_every_annotation_type_github_cuts_is_said_in_the_log_and_the_step_summary(
        tmp_path: Path, config: str, kind: str, said: str) -> None:
    tree = _runs(tmp_path, 12, config)
    summary = tmp_path / "summary.md"
    summary.write_text("")
    proc = run_main("check", "--format", "github", str(tree),
                    env={"GITHUB_STEP_SUMMARY": str(summary)})
    lines = proc.stdout.decode().splitlines()
    assert sum(ln.startswith(f"::{kind} ") for ln in lines) == 12 + (kind == "notice")
    assert lines[0].startswith("::notice title=qrspi-guard::GitHub shows only 10")
    assert f"not shown as annotations: 0 errors, {2 if kind == 'warning' else 0} warnings," \
        in lines[0]
    assert said in summary.read_text().splitlines()


def test_with_nothing_cut_the_step_summary_says_nothing_of_the_limit(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("")
    run_main("check", "--format", "github", "example", cwd=FIXTURES,
             env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert "GitHub annotated only" not in summary.read_text()


def test_what_the_step_summary_leaves_out_is_named_with_this_job_s_log_and_output_file(
        tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    # earlier steps left the summary nearly full: the overview's sections cannot fit
    summary.write_text("x" * (SUMMARY_LIMIT - 1024) + "\n")
    out = tmp_path / "guard.sarif"
    proc = run_main("check", "--format", "github", "--output", str(out), "--output-format",
                    "sarif", "example", "example-fanin", cwd=FIXTURES,
                    env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert proc.returncode == 1, proc.stderr
    added = summary.read_text().split("\n", 1)[1]
    left = [ln for ln in added.splitlines() if "left out" in ln.lower()]
    assert left, added
    for ln in left:
        assert "qrspi-guard status" not in ln
        assert "this step's log" in ln and str(out) in ln, ln
