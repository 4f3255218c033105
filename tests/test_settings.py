"""The project configuration file: found upward to the repository root, every key,
precedence over the environment and under the command line, --show-settings, and exit
2 naming file, line and key for a file that is wrong."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from qrspi_guard.errors import ConfigFileError
from qrspi_guard.settings import CommandLine, find, resolve
from tests.support import FIXTURES, Run, run_main


def git_init(path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(path)], check=True, capture_output=True)


def causes(*args: str, cwd: Path) -> list[str]:
    proc = run_main("check", "--format", "json", *args, cwd=cwd)
    assert proc.returncode in (0, 1), proc.stderr
    return [d["cause"] for d in json.loads(proc.stdout)["diagnostics"]]


@pytest.fixture
def halted(run: Run) -> Run:
    run.finding("goals", 1, "quality-claude", change_type="corectness")  # + scope silent
    return run


def test_pyproject_table_is_found_from_a_subdirectory(halted: Run) -> None:
    (halted.root / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.qrspi-guard]\nignore = ["expected_tag_no_output"]\n')
    sub = halted.root / "reviews" / "goals"
    assert causes(".", cwd=sub) == ["change_type_out_of_enum"]


def test_own_file_keys_stand_at_top_level_and_win_over_pyproject_in_one_directory(
        halted: Run) -> None:
    (halted.root / "pyproject.toml").write_text('[tool.qrspi-guard]\nignore = ["ALL"]\n')
    (halted.root / ".qrspi-guard.toml").write_text('select = ["expected_tag_no_output"]\n')
    assert causes(".", cwd=halted.root) == ["expected_tag_no_output"]


def test_a_pyproject_without_the_table_is_passed_over(halted: Run, tmp_path: Path) -> None:
    (halted.root / "pyproject.toml").write_text('[project]\nname = "x"\n')
    (halted.root.parent / ".qrspi-guard.toml").write_text('ignore = ["change_type_out_of_enum"]\n')
    assert causes(".", cwd=halted.root) == ["expected_tag_no_output"]


def test_the_search_stops_at_the_repository_root(halted: Run) -> None:
    (halted.root.parent / ".qrspi-guard.toml").write_text('ignore = ["ALL"]\n')
    git_init(halted.root)  # the run is its own repository: the file above is not read
    assert causes(".", cwd=halted.root) == ["expected_tag_no_output", "change_type_out_of_enum"]
    assert find(str(halted.root)) is None


def test_command_line_wins_and_isolated_reads_no_file(halted: Run) -> None:
    (halted.root / ".qrspi-guard.toml").write_text('ignore = ["expected_tag_no_output"]\n')
    assert causes("--select", "ALL", ".", cwd=halted.root) == [
        "expected_tag_no_output", "change_type_out_of_enum"]
    assert causes("--isolated", ".", cwd=halted.root) == [
        "expected_tag_no_output", "change_type_out_of_enum"]


def test_per_file_ignores_globs_are_relative_to_the_config_files_directory(halted: Run) -> None:
    halted.finding("design", 1, "quality-claude", change_type="corectness")
    (halted.root / ".qrspi-guard.toml").write_text(
        '[per-file-ignores]\n"reviews/goals/**" = ["change_type_out_of_enum"]\n'
        '"**/round-01" = ["expected_tag_no_output"]\n')
    sub = halted.root / "reviews"
    assert causes(".", cwd=sub) == ["change_type_out_of_enum"]  # design's only


def test_format_precedence_command_line_then_file_then_github_actions(halted: Run) -> None:
    env = {"GITHUB_ACTIONS": "true"}
    proc = run_main("check", ".", cwd=halted.root, env=env)
    assert proc.stdout.startswith(b"::error ")  # yamllint's rule: github inside Actions
    (halted.root / ".qrspi-guard.toml").write_text('format = "json"\n')
    proc = run_main("check", ".", cwd=halted.root, env=env)
    assert json.loads(proc.stdout)["summary"]["errors"] == 2  # the file wins over Actions
    proc = run_main("check", "--format", "text", ".", cwd=halted.root, env=env)
    assert proc.stdout.decode().splitlines()[-1].endswith("2 errors, 0 warnings")


def test_strict_from_the_file_fails_on_warnings(run: Run) -> None:
    run.finding("goals", 1, "quality-claude", n=2)  # fnum_gap: a warning
    run.clean("goals", 1, "scope-claude")
    assert run_main("check", ".", cwd=run.root).returncode == 0
    (run.root / ".qrspi-guard.toml").write_text("strict = true\n")
    assert run_main("check", ".", cwd=run.root).returncode == 1
    assert run_main("check", "--no-strict", ".", cwd=run.root).returncode == 0


def test_extra_expected_tags_are_expected_and_count_as_routed(run: Run) -> None:
    run.clean("design", 1, "quality-claude")
    run.clean("design", 1, "scope-claude")
    run.clean("design", 1, "stitching-audit-claude")
    assert "unrouted_tag" in causes(".", cwd=run.root)
    (run.root / ".qrspi-guard.toml").write_text(
        '[extra-expected-tags]\ndesign = ["stitching-audit-claude"]\n')
    assert causes(".", cwd=run.root) == []
    (run.root / "reviews/design/round-01/stitching-audit-claude.clean.md").unlink()
    assert causes(".", cwd=run.root) == ["expected_tag_no_output"]


def test_thresholds_and_protocol_reach_the_engine(tmp_path: Path) -> None:
    (tmp_path / ".qrspi-guard.toml").write_text(
        'protocol = "fan-in"\n[thresholds]\nstyle = 90\ncorrectness = 50\n')
    s = resolve(start=str(tmp_path))
    assert s.protocol == "fan-in" and s.thresholds is not None
    assert s.thresholds.as_dict() == {"style": 90, "clarity": 80, "correctness": 50}
    from qrspi_guard.contract.runconfig import Overrides

    o = s.overrides(Overrides())
    assert o.protocol == "fan-in" and o.thresholds == s.thresholds
    s2 = resolve(CommandLine(protocol="apply-fix"), start=str(tmp_path))
    assert s2.protocol == "apply-fix" and s2.sources["protocol"] == "command line"


def test_show_settings_prints_each_setting_and_where_it_came_from(halted: Run) -> None:
    (halted.root / "pyproject.toml").write_text(
        '[tool.qrspi-guard]\nignore = ["fnum_gap"]\nstrict = true\n')
    proc = run_main("check", "--show-settings", "--ignore", "utf8_bom", cwd=halted.root,
                   env={"GITHUB_ACTIONS": "true"})
    assert proc.returncode == 0
    out = proc.stdout.decode()
    assert "config file: pyproject.toml [tool.qrspi-guard]" in out
    assert 'format = "github"  # GITHUB_ACTIONS=true' in out
    assert "strict = true  # pyproject.toml [tool.qrspi-guard]" in out
    assert 'ignore = ["utf8_bom"]  # pyproject.toml [tool.qrspi-guard], then command line' in out
    assert "(off: utf8_bom, fnum_gap)" in out
    doc = json.loads(run_main("check", "--show-settings", "--format", "json",
                             cwd=halted.root).stdout)
    assert doc["disabled"] == ["fnum_gap"] and doc["config_file"] == "pyproject.toml"


BAD = [
    ('select = ["fnum_gap"]\nbogus = 1\n', 2, "bogus", "unknown key"),
    ('ignore = ["fnum_gap",\n  "no_such_cause"]\n', 1, "ignore", "unknown cause 'no_such_cause'"),
    ('strict = "yes"\n', 1, "strict", "must be true or false"),
    ('format = "xml"\n', 1, "format", "must be one of"),
    ('\n[thresholds]\nstyle = 101\n', 3, "thresholds.style", "0 to 100"),
    ('[extra-expected-tags]\ndesing = ["x-claude"]\n', 2, "extra-expected-tags.desing",
     "unknown step"),
    ('[per-file-ignores]\n"a/**" = ["nope"]\n', 2, "per-file-ignores.a/**", "unknown cause"),
    ('select = [fnum_gap]\n', 1, "select", "cannot be parsed as TOML"),
]


@pytest.mark.parametrize(("text", "line", "key", "problem"), BAD,
                         ids=[b[2] + "-" + b[3] for b in BAD])
def test_a_wrong_config_file_is_exit_2_naming_file_line_and_key(
        run: Run, text: str, line: int, key: str, problem: str) -> None:
    (run.root / ".qrspi-guard.toml").write_text(text)
    proc = run_main("check", ".", cwd=run.root)
    assert proc.returncode == 2
    err = proc.stderr.decode()
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith(f"qrspi-guard check: error: .qrspi-guard.toml:{line}: "), err
    assert key in err and problem in err, err


def test_an_unknown_key_in_the_pyproject_table_names_its_line(run: Run) -> None:
    (run.root / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.qrspi-guard]\nselect = ["ALL"]\nignored = ["x"]\n')
    with pytest.raises(ConfigFileError) as info:
        resolve(start=str(run.root))
    assert "pyproject.toml:6: ignored: unknown key" in str(info.value)


def test_explain_says_a_cause_is_on_by_default_and_how_to_turn_it_off() -> None:
    out = run_main("explain", "fnum_gap").stdout.decode()
    assert "On by default." in out
    assert "--ignore fnum_gap" in out and 'ignore = ["fnum_gap"]' in out
    doc = json.loads(run_main("explain", "fnum_gap", "--format", "json").stdout)
    assert doc["default"] == "on"


def test_the_repository_itself_has_no_settings_that_change_the_suite() -> None:
    assert resolve(start=str(FIXTURES)).config is None


def test_a_pyproject_that_only_names_the_package_is_not_parsed_at_all(tmp_path: Path) -> None:
    from qrspi_guard.settings.configfile import _may_hold_table

    assert not _may_hold_table('[project]\nname = "qrspi-guard"\n[project.scripts]\n'
                               'qrspi-guard = "qrspi_guard.cli:main"\n')
    for text in ('[tool.qrspi-guard]\n', '[tool."qrspi-guard".per-file-ignores]\n',
                 '[tool]\nqrspi-guard = { strict = true }\n', 'tool.qrspi-guard.strict = true\n'):
        assert _may_hold_table(text), text
    (tmp_path / "pyproject.toml").write_text('[tool]\nqrspi-guard = { strict = true }\n')
    assert resolve(start=str(tmp_path)).strict is True


def test_require_sidecars_from_the_file_requires_them_as_the_option_does(run: Run) -> None:
    """A setting declared once (settings/declared.py) reaches the rules, the option's
    help and --show-settings alike."""
    run.config("second_reviewer: false\nverifier_enabled: true\n")
    run.finding("goals", 1, "quality-claude")
    run.clean("goals", 1, "scope-claude")
    assert "sidecar_missing" not in causes(".", cwd=run.root)
    assert "sidecar_missing" in causes("--require-sidecars", ".", cwd=run.root)
    (run.root / ".qrspi-guard.toml").write_text("require-sidecars = true\n")
    assert "sidecar_missing" in causes(".", cwd=run.root)
    shown = run_main("check", "--show-settings", cwd=run.root).stdout.decode()
    assert "require-sidecars = true  # .qrspi-guard.toml" in shown
    (run.root / ".qrspi-guard.toml").write_text('require-sidecars = "yes"\n')
    proc = run_main("check", ".", cwd=run.root)
    assert proc.returncode == 2
    assert b".qrspi-guard.toml:1: require-sidecars: must be true or false" in proc.stderr
