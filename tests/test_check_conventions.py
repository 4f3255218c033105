"""Editor and shell conventions: --stdin-filename PATH -, -V, --color and FORCE_COLOR,
--quiet in every format, shell completion."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from qrspi_guard.cli.conventions import use_color
from tests.support import FIXTURES, Run, run_main, stdout_on_tty

EXAMPLE = FIXTURES / "example"
F01 = next(EXAMPLE.rglob("design/round-02/quality-claude.finding-F01.md"))


def test_stdin_is_judged_as_the_file_at_stdin_filename_and_only_it_is_reported() -> None:
    fixed = F01.read_bytes().replace(b"corectness", b"correctness")
    proc = run_main("check", "--format", "json", "--stdin-filename", str(F01), "-",
                   input=fixed)
    # the buffer's own defect is gone; the round's others are not the buffer's (ruff's way)
    assert proc.returncode == 0
    doc = json.loads(proc.stdout)
    assert doc["diagnostics"] == []
    assert F01.read_bytes() != fixed  # nothing written
    proc = run_main("check", "--stdin-filename", str(F01), "-", input=F01.read_bytes())
    assert b":4: error change_type_out_of_enum" in proc.stdout


def test_stdin_for_a_new_file_and_for_a_loose_finding(run: Run, tmp_path: Path) -> None:
    run.clean("goals", 1, "scope-claude")
    new = run.root / "reviews/goals/round-01/quality-claude.finding-F01.md"
    body = (FIXTURES / "valid/reviews/goals/round-01/quality-claude.finding-F01.md").read_bytes()
    proc = run_main("check", "--stdin-filename", str(new), "-", input=body)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not new.exists()
    loose = tmp_path / "quality-claude.finding-F01.md"
    proc = run_main("check", "--format", "json", "--stdin-filename", str(loose), "-",
                   input=b"no frontmatter\n")
    assert [d["cause"] for d in json.loads(proc.stdout)["diagnostics"]] == ["no_frontmatter"]


def test_stdin_needs_both_the_dash_and_the_file_name() -> None:
    for args in (["check", "-"], ["check", "--stdin-filename", "x.md", "a", "b"],
                 ["check", "--fix", "--stdin-filename", "x.md", "-"]):
        proc = run_main(*args, input=b"")
        assert proc.returncode == 2 and proc.stderr.count(b"\n") == 1, args


def test_dash_v_prints_the_version() -> None:
    for flag in ("-V", "--version"):
        proc = run_main(flag)
        assert proc.returncode == 0 and proc.stdout.startswith(b"qrspi-guard, version ")


def test_colour_rule_flag_then_no_color_then_force_color_then_the_terminal() -> None:
    assert use_color("always", {"NO_COLOR": "1"}, False) is True
    assert use_color("never", {"FORCE_COLOR": "1"}, True) is False
    assert use_color("auto", {"NO_COLOR": "1", "FORCE_COLOR": "1"}, True) is False
    assert use_color("auto", {"FORCE_COLOR": "1"}, False) is True
    assert use_color("auto", {"NO_COLOR": ""}, True) is True  # empty means unset
    assert use_color("auto", {}, False) is False


def test_color_always_and_force_color_colour_a_pipe_and_never_wins() -> None:
    assert b"\x1b[31merror" in run_main("check", "--color", "always", str(EXAMPLE)).stdout
    assert b"\x1b[31merror" in run_main("check", str(EXAMPLE), env={"FORCE_COLOR": "1"}).stdout
    assert b"\x1b[" not in run_main("check", str(EXAMPLE),
                                   env={"FORCE_COLOR": "1", "NO_COLOR": "1"}).stdout
    assert b"\x1b[" not in run_main("check", "--no-color", "--color", "always",
                                   str(EXAMPLE)).stdout
    # machine formats are never coloured
    assert b"\x1b[" not in run_main("check", "--format", "json", "--color", "always",
                                   str(EXAMPLE)).stdout


def test_color_never_on_a_terminal() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    out = stdout_on_tty("check", "--color", "never", str(EXAMPLE), env=env)
    assert b"error" in out and b"\x1b[" not in out


@pytest.fixture
def warned(run: Run) -> Run:
    run.finding("goals", 1, "quality-claude", n=2)  # fnum_gap, a warning
    run.finding("goals", 1, "quality-claude", n=3, severity="urgent")  # an error
    run.clean("goals", 1, "scope-claude")
    return run


def test_quiet_is_honoured_by_every_format(warned: Run) -> None:
    def shown(fmt: str, *extra: str) -> bytes:
        out = run_main("check", "--format", fmt, *extra, str(warned.root)).stdout
        if fmt == "sarif":  # the rules list names every cause: look at the results
            return json.dumps(json.loads(out)["runs"][0]["results"]).encode()
        return out

    for fmt in ("text", "json", "github", "sarif", "junit"):
        assert b"fnum_gap" in shown(fmt), fmt
        quiet = shown(fmt, "--quiet")
        assert b"fnum_gap" not in quiet, fmt
        assert b"severity_out_of_enum" in quiet, fmt
        assert b"fnum_gap" in shown(fmt, "--quiet", "--strict"), fmt  # warnings fail then
    doc = json.loads(shown("json", "--quiet"))
    assert doc["summary"]["warnings"] == 1  # the summary still counts everything


def test_bash_completion_is_generated_as_documented() -> None:
    proc = run_main(env={"_QRSPI_GUARD_COMPLETE": "bash_source"})
    assert proc.returncode == 0
    assert b"_qrspi_guard_completion" in proc.stdout
    proc = run_main(env={"_QRSPI_GUARD_COMPLETE": "bash_complete", "COMP_WORDS": "qrspi-guard ch",
                        "COMP_CWORD": "1"})
    assert b"check" in proc.stdout
