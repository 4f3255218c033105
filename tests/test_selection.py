"""Rule selection in ruff's spelling: --select, --ignore, --extend-select, per-file
ignores, --exit-zero and --statistics, applied by one function to every output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qrspi_guard import check
from qrspi_guard.contract.causes import CATALOGUE
from qrspi_guard.output.statistics import statistics
from qrspi_guard.settings import (
    ALL,
    Layer,
    PerFileIgnore,
    Selection,
    UnknownCause,
    apply_selection,
    enabled_causes,
    parse_names,
)
from tests.support import FIXTURES, Run, run_main


def causes(*args: str, cwd: Path | str = FIXTURES) -> list[str]:
    proc = run_main("check", "--format", "json", *args, cwd=cwd)
    assert proc.returncode in (0, 1), proc.stderr
    return [d["cause"] for d in json.loads(proc.stdout)["diagnostics"]]


def test_every_catalogue_cause_is_on_by_default() -> None:
    assert enabled_causes([]) == frozenset(CATALOGUE)
    assert Selection().everything


def test_layers_apply_in_order_select_starts_over_extend_adds_ignore_removes() -> None:
    file_layer = Layer(ignore=("fnum_gap",))
    assert "fnum_gap" not in enabled_causes([file_layer])
    cli = Layer(select=("fnum_gap", "not_utf8"))
    assert enabled_causes([file_layer, cli]) == {"fnum_gap", "not_utf8"}
    more = Layer(select=("not_utf8",), extend_select=("utf8_bom",), ignore=("not_utf8",))
    assert enabled_causes([more]) == {"utf8_bom"}
    assert enabled_causes([Layer(select=(ALL,), ignore=("utf8_bom",))]) == (
        frozenset(CATALOGUE) - {"utf8_bom"})


def test_an_unknown_cause_name_is_refused_naming_it() -> None:
    assert parse_names(["fnum_gap, not_utf8", "fnum_gap"], "--ignore") == ("fnum_gap",
                                                                           "not_utf8")
    with pytest.raises(UnknownCause) as info:
        parse_names(["fnum_gap,fnum_gapp"], "--ignore")
    assert "--ignore: unknown cause 'fnum_gapp'" in str(info.value)


def test_ignoring_a_cause_on_the_command_line_removes_it_from_every_format() -> None:
    assert "expected_tag_no_output" in causes("example")
    assert causes("--ignore", "expected_tag_no_output", "example") == [
        "change_type_out_of_enum", "missing_change_type"]
    for fmt in ("text", "github", "junit"):
        proc = run_main("check", "--format", fmt, "--ignore", "expected_tag_no_output",
                       "example", cwd=FIXTURES)
        assert b"expected_tag_no_output" not in proc.stdout, fmt
    proc = run_main("check", "--format", "sarif", "--ignore", "expected_tag_no_output",
                   "example", cwd=FIXTURES)
    run = json.loads(proc.stdout)["runs"][0]
    assert {r["ruleId"] for r in run["results"]} == {"change_type_out_of_enum",
                                                      "missing_change_type"}
    assert len(run["tool"]["driver"]["rules"]) == len(CATALOGUE)  # rule indexes stay put


def test_an_unknown_cause_on_the_command_line_is_exit_2_naming_it() -> None:
    for option in ("--select", "--ignore", "--extend-select"):
        proc = run_main("check", option, "change_type_out_of_enum,no_such_cause", "example",
                       cwd=FIXTURES)
        assert proc.returncode == 2
        assert proc.stderr.decode() == (f"qrspi-guard check: error: {option}: unknown cause "
                                        "'no_such_cause' (see `qrspi-guard explain "
                                        "--list`)\n")


def test_select_reports_only_those_causes_and_the_exit_code_follows() -> None:
    proc = run_main("check", "--select", "missing_change_type", "example", cwd=FIXTURES)
    assert proc.returncode == 1
    assert b"change_type_out_of_enum" not in proc.stdout
    assert proc.stdout.decode().splitlines()[-1] == "4 rounds, 12 files: 1 error, 0 warnings"
    proc = run_main("check", "--select", "utf8_bom", "example", cwd=FIXTURES)
    assert proc.returncode == 0


def test_an_ignored_halt_cause_never_reaches_the_status_file(tmp_path: Path) -> None:
    import shutil

    work = tmp_path / "ex"
    shutil.copytree(FIXTURES / "example", work, symlinks=True)
    proc = run_main("check", "--write-status", "--select", "expected_tag_no_output",
                   "--ignore", "expected_tag_no_output", str(work))
    assert proc.returncode == 0
    design = next(work.rglob("reviews/design"))
    doc = json.loads((design / "round-02-guard.json").read_text())
    assert doc["status"] == "ok" and doc["halts"] == []


def test_apply_selection_recomputes_round_status_and_never_changes_its_argument() -> None:
    from qrspi_guard.engine import check_paths

    result = check_paths([str(FIXTURES / "example")])
    halted = [r for r in result.rounds if r.status == "halt"]
    assert len(halted) == 1
    quiet = apply_selection(result, Selection(frozenset(CATALOGUE) - {
        "expected_tag_no_output", "change_type_out_of_enum", "missing_change_type"}))
    assert [r.status for r in quiet.rounds] == ["ok"] * 4
    assert quiet.diagnostics == [] and not quiet.failed()
    assert halted[0].status == "halt" and len(result.diagnostics) == 3  # unchanged
    # a round result alone (watch) and a list of diagnostics (hook)
    one = apply_selection(halted[0], Selection(frozenset({"missing_change_type"})))
    assert one.status == "halt" and [d.cause for d in one.diagnostics] == [
        "missing_change_type"]
    assert apply_selection(result.diagnostics, Selection(frozenset())) == []
    assert apply_selection(result, Selection()) is result


def test_per_file_ignores_match_globs_relative_to_the_config_directory(tmp_path: Path) -> None:
    from qrspi_guard.contract.diagnostics import diag

    base = tmp_path / "proj"
    d = diag("fnum_gap", "gap", path=str(base / "docs/run/reviews/goals/round-01/x.md"))
    r = diag("expected_tag_no_output", "silent", path=str(base / "docs/run/reviews/goals/round-01"))
    other = diag("fnum_gap", "gap", path=str(tmp_path / "elsewhere/reviews/goals/round-01/x.md"))

    def sel(pattern: str, names: tuple[str, ...]) -> Selection:
        return Selection(per_file=(PerFileIgnore.of(pattern, names),), base=str(base))

    assert not sel("docs/**", ("fnum_gap",)).allows(d)
    assert sel("docs/**", ("fnum_gap",)).allows(other)  # outside the config's directory
    assert not sel("**/round-01", ("ALL",)).allows(r)  # a directory covers its files too
    assert not sel("**/round-01", ("ALL",)).allows(d)
    assert not sel("x.md", ("fnum_gap",)).allows(d)  # no `/`: a bare name matches
    assert sel("docs/*/x.md", ("fnum_gap",)).allows(d)  # `*` stays in one directory
    assert sel("docs/**", ("not_utf8",)).allows(d)


def test_statistics_counts_per_cause_most_frequent_first(run: Run) -> None:
    for n in range(1, 4):
        run.finding("goals", 1, "quality-claude", n=n, severity="urgent")
    run.finding("goals", 1, "quality-claude", n=4, change_type="corectness")
    proc = run_main("check", "--statistics", str(run.root))
    assert proc.returncode == 1
    lines = proc.stdout.decode().splitlines()
    assert lines[:3] == ["3  severity_out_of_enum     error",
                         "1  change_type_out_of_enum  error",
                         "1  expected_tag_no_output   error"]
    assert lines[-1].endswith("5 errors, 0 warnings")
    doc = json.loads(run_main("check", "--statistics", "--format", "json", str(run.root)).stdout)
    assert doc[0] == {"cause": "severity_out_of_enum", "level": "error", "count": 3}
    assert run_main("check", "--statistics", "--format", "sarif", str(run.root)).returncode == 2


def test_statistics_helper_sorts_by_count_then_name() -> None:
    from qrspi_guard.contract.diagnostics import diag

    ds = [diag("utf8_bom", "x"), diag("fnum_gap", "x"), diag("utf8_bom", "y")]
    assert statistics(ds) == [("utf8_bom", "warning", 2), ("fnum_gap", "warning", 1)]


def test_exit_zero_passes_a_run_with_halts_but_2_still_means_could_not_run() -> None:
    proc = run_main("check", "--exit-zero", "example", cwd=FIXTURES)
    assert proc.returncode == 0 and b"change_type_out_of_enum" in proc.stdout
    assert run_main("check", "--exit-zero", "no/such/path").returncode == 2


def test_fix_leaves_files_alone_where_trailing_newline_is_not_selected(run: Run) -> None:
    p = run.finding("goals", 1, "quality-claude")
    p.write_bytes(p.read_bytes() + b"\n\n")
    before = p.read_bytes()
    run.clean("goals", 1, "scope-claude")
    proc = run_main("check", "--fix", "--ignore", "trailing_newline", str(run.root))
    assert proc.returncode == 0 and p.read_bytes() == before
    assert run_main("check", "--fix", str(run.root)).returncode == 0
    assert p.read_bytes() != before


# -- watch and hook honour the selection too ----------------------------------------------


def test_watch_leaves_an_ignored_cause_out_of_the_status_file(tmp_path: Path) -> None:
    """`watch` applies the same selection as `check` before it publishes a round."""
    from qrspi_guard.contract.runconfig import Overrides
    from qrspi_guard.settings import CommandLine, resolve
    from qrspi_guard.watch.events import ScriptedSource
    from qrspi_guard.watch.loop import Options, Watcher

    run = Run(tmp_path / "art").config()
    run.finding("goals", 1, "quality-claude", change_type="corectness")
    run.clean("goals", 1, "scope-claude")
    selection = resolve(CommandLine(ignore=("change_type_out_of_enum",))).selection
    w = Watcher(str(run.root), Overrides(), ScriptedSource(), Options(fmt="json"),
                out=lambda s: None, err=lambda s: None, selection=selection)
    w.discover()
    w.tick()
    doc = json.loads((run.root / "reviews" / "goals" / "round-01-guard.json").read_text())
    assert doc["status"] != "halt" and doc["halts"] == []
    assert check(str(run.root)).failed()  # without the selection it is a halt


def test_the_hook_allows_a_write_whose_only_error_the_project_ignores(tmp_path: Path) -> None:
    """The hook reads the project configuration from the call's working directory up."""
    run = Run(tmp_path / "art").config()
    (tmp_path / ".qrspi-guard.toml").write_text('ignore = ["change_type_out_of_enum"]\n')
    path = run.round_dir("goals", 1) / "quality-claude.finding-F01.md"
    text = run.finding("goals", 1, "quality-claude", change_type="corectness").read_text()
    path.unlink()
    payload = {"hook_event_name": "PreToolUse", "tool_name": "Write", "cwd": str(tmp_path),
               "tool_input": {"file_path": str(path), "content": text}}
    allowed = run_main("hook", input=json.dumps(payload).encode(), cwd=tmp_path)
    assert allowed.returncode == 0 and allowed.stderr == b""
    (tmp_path / ".qrspi-guard.toml").unlink()
    refused = run_main("hook", input=json.dumps(payload).encode(), cwd=tmp_path)
    assert refused.returncode == 2 and b"change_type_out_of_enum" in refused.stderr


def test_a_broken_project_configuration_is_the_hooks_own_failure(tmp_path: Path) -> None:
    run = Run(tmp_path / "art").config()
    (tmp_path / ".qrspi-guard.toml").write_text("ignore = [\n")
    path = run.round_dir("goals", 1) / "quality-claude.finding-F01.md"
    payload = {"hook_event_name": "PreToolUse", "tool_name": "Write", "cwd": str(tmp_path),
               "tool_input": {"file_path": str(path), "content": "no frontmatter\n"}}
    proc = run_main("hook", input=json.dumps(payload).encode(), cwd=tmp_path)
    assert proc.returncode == 0 and proc.stderr.count(b"\n") == 1  # fail open, one line
    assert run_main("hook", "--fail-closed", input=json.dumps(payload).encode(),
                   cwd=tmp_path).returncode == 2
