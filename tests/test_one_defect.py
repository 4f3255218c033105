"""One defect, one diagnostic: where a cause only follows from another on the same files,
only the root is reported, with its one fix (rules/consequences.py).

Every fixture is run: each of ``fixtures/rounds/causes/`` holds one defect, each of
``fixtures/rounds/one-defect/`` one defect that used to be reported as two causes or more,
and the example runs one diagnostic per defect they were written with.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from qrspi_guard.contract.causes import CATALOGUE
from qrspi_guard.rules.consequences import CONSEQUENCES
from tests.support import FIXTURES, REPO, run_main

CAUSES = json.loads((FIXTURES / "causes" / "index.json").read_text())
ONE_DEFECT = json.loads((FIXTURES / "one-defect" / "index.json").read_text())


def _check(*args: str) -> tuple[int, list[dict[str, Any]]]:
    proc = run_main("check", "--format", "json", *args, cwd=FIXTURES)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)["diagnostics"]


@pytest.mark.parametrize("cause", sorted(c for c, e in CAUSES.items()
                                         if e.get("command") != "split" and "setup" not in e))
def test_every_cause_fixture_reports_its_one_defect_as_its_cause_alone(cause: str) -> None:
    entry = CAUSES[cause]
    _, diags = _check(*entry["args"], entry["path"])
    assert {d["cause"] for d in diags} == {cause}, [(d["cause"], d["message"]) for d in diags]


@pytest.mark.parametrize("name", sorted(ONE_DEFECT))
def test_a_defect_that_other_causes_follow_from_is_reported_once_as_its_root(name: str) -> None:
    entry = ONE_DEFECT[name]
    code, diags = _check(*entry["args"], entry["path"])
    assert [d["cause"] for d in diags] == [entry["root"]], [
        (d["cause"], d.get("file"), d["message"]) for d in diags]
    assert code == (1 if CATALOGUE[entry["root"]].level == "error" else 0)


def test_the_example_runs_report_each_defect_once() -> None:
    code, diags = _check("example", "example-fanin")
    got = sorted((d["cause"], Path(d["path"]).name) for d in diags)
    assert got == [
        ("change_type_out_of_enum", "quality-claude.finding-F01.md"),
        ("expected_tag_no_output", "round-02"),
        ("expected_tag_no_output", "round-02"),
        ("missing_change_type", "quality-claude.finding-F02.md"),
        ("sidecar_wrong_extension", "quality-codex.finding-F01.score.yml"),
    ]
    assert code == 1


def test_the_readme_quick_start_shows_what_check_prints() -> None:
    readme = (REPO / "README.md").read_text()
    shown = readme.split("What the first command prints:\n\n```\n", 1)[1].split("```", 1)[0]
    proc = run_main("check", "fixtures/rounds/example", "fixtures/rounds/example-fanin",
                    cwd=REPO)
    printed = proc.stdout.decode()
    # the README shortens the paths below a run's reviews/ with `...`
    pattern = "".join(re.escape(part) if part != "..." else r"[^ :]*"
                      for part in re.split(r"(\.\.\.)", shown))
    assert re.fullmatch(pattern, printed), printed
    assert "five defects" in readme and printed.count(": error ") == 5


def test_a_wrong_extension_sidecar_is_one_halt_in_status_report_and_fan_in(
        tmp_path: Path) -> None:
    run = tmp_path / "example-fanin"
    shutil.copytree(FIXTURES / "example-fanin", run)
    round_dir = next(run.glob("docs/qrspi/*/reviews/design/round-02"))
    status = json.loads(run_main("status", "--format", "json", str(run)).stdout)
    halts = [h["cause"] for r in status["runs"] for s in r["steps"] for rd in s["rounds"]
             if rd["path"].endswith("design/round-02") for h in rd["halts"]]
    assert halts == ["sidecar_wrong_extension"]
    html = run_main("report", "-o", "-", str(run)).stdout.decode()
    assert "sidecar_wrong_extension" in html and "sidecar_missing" not in html
    assert run_main("fan-in", str(round_dir)).returncode == 1
    audit = json.loads((round_dir / ".verifier-fan-in-audit.json").read_text())
    assert [h["cause"] for h in audit["halts"]] == ["sidecar_wrong_extension"]


def test_an_ignored_root_leaves_its_consequence_reported() -> None:
    _, diags = _check("--ignore", "sidecar_wrong_extension", "example-fanin")
    assert "sidecar_missing" in {d["cause"] for d in diags}  # the defect is never hidden
    entry = ONE_DEFECT["vf-skip-unknown-reason"]
    _, diags = _check("--ignore", "vf_sentinel_invalid", entry["path"])
    assert [d["cause"] for d in diags] == ["expected_tag_no_output"]


def test_every_pair_names_causes_of_the_catalogue_and_has_a_fixture() -> None:
    roots = {entry["root"] for entry in ONE_DEFECT.values()}
    for pair in CONSEQUENCES:
        assert pair.root in CATALOGUE and pair.consequence in CATALOGUE
        assert pair.root != pair.consequence and pair.why
    # every root is shown by a fixture (split_incomplete's is causes/split_incomplete)
    named = {p.root for p in CONSEQUENCES}
    assert named - roots == {"split_incomplete"}, named - roots
