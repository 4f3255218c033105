"""What a new user meets first (issue 23): readable bare help, a warning when nothing was
checked, "did you mean" for a mistyped cause wherever a cause is typed, an empty
selection refused, option combinations refused before any work, one broken-pipe
behaviour, and --stdin-filename limited to the buffer."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support import FIXTURES, SCRIPT, run_cli, run_main

EXAMPLE = FIXTURES / "example"
DESIGN = EXAMPLE / "docs/qrspi/2026-05-17-auth-rework/reviews/design/round-02"


@pytest.mark.parametrize("args, words", [
    ((), ["Commands:", "check", "explain"]),
    (("lockout",), ["Commands:", "approve", "reject"]),
])
def test_a_bare_group_prints_readable_help(args: tuple[str, ...], words: list[str]) -> None:
    proc = run_main(*args)
    text = (proc.stdout + proc.stderr).decode()
    assert "\\n" not in text
    assert text.count("\n") > 5
    assert all(w in text for w in words)
    assert text.startswith("Usage: qrspi-guard")


def test_check_with_no_rounds_warns_on_stderr_and_exits_0(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    proc = run_main("check", "docs", cwd=tmp_path)
    assert proc.returncode == 0
    assert proc.stderr.decode() == (
        "qrspi-guard check: warning: no review rounds found under docs (looked for "
        "reviews/<step>/round-NN/ and reviews/tasks/task-NN/round-NN/)\n")
    assert proc.stdout.decode() == "0 rounds, 0 files: 0 errors, 0 warnings\n"
    quiet = run_main("check", "docs", "--format", "json", cwd=tmp_path)
    assert quiet.returncode == 0 and b"warning: no review rounds" in quiet.stderr


@pytest.mark.parametrize("args", [
    ("check", "--select", "corectness"), ("check", "--ignore", "change_type_out_of_enm"),
    ("check", "--extend-select", "fnum_gap,change_typ_out_of_enum"),
])
def test_a_mistyped_cause_on_the_command_line_gets_a_suggestion(
        tmp_path: Path, args: tuple[str, ...]) -> None:
    proc = run_main(*args, str(tmp_path))
    assert proc.returncode == 2
    err = proc.stderr.decode()
    assert "did you mean" in err and err.count("\n") == 1, err


def test_select_corectness_suggests_the_causes_about_correctness(tmp_path: Path) -> None:
    err = run_main("check", "--select", "corectness", str(tmp_path)).stderr.decode()
    assert "unknown cause 'corectness'" in err and "did you mean" in err


def test_explain_a_mistyped_cause_suggests_the_nearest(tmp_path: Path) -> None:
    proc = run_main("explain", "change_typ")
    assert proc.returncode == 2
    assert "did you mean 'missing_change_type' or 'change_type_out_of_enum'?" in \
        proc.stderr.decode()


def test_a_mistyped_cause_in_the_configuration_gets_a_suggestion(tmp_path: Path) -> None:
    (tmp_path / ".qrspi-guard.toml").write_text('ignore = ["fnum_gapp"]\n')
    err = run_main("check", ".", cwd=tmp_path).stderr.decode()
    assert "unknown cause 'fnum_gapp'" in err and "did you mean 'fnum_gap'" in err
    (tmp_path / ".qrspi-guard.toml").write_text('[per-file-ignores]\n"a/**" = ["utf8_bmo"]\n')
    err = run_main("check", ".", cwd=tmp_path).stderr.decode()
    assert "did you mean 'utf8_bom'" in err


def test_shell_completion_completes_cause_names(tmp_path: Path) -> None:
    def complete(words: str) -> list[str]:
        env = {"_QRSPI_GUARD_COMPLETE": "bash_complete", "COMP_WORDS": words,
               "COMP_CWORD": str(len(words.split()) - (0 if words.endswith(" ") else 1))}
        proc = run_cli(env=env)
        return [ln.split(",", 1)[1] for ln in proc.stdout.decode().splitlines() if "," in ln]

    assert "change_type_out_of_enum" in complete("qrspi-guard check --select change_type_o")
    assert "fnum_gap,change_type_out_of_enum" in complete(
        "qrspi-guard check --ignore fnum_gap,change_type_o")
    assert sorted(complete("qrspi-guard explain fnum_")) == ["fnum_gap", "fnum_mismatch"]


@pytest.mark.parametrize("value", ["", " , ", ","])
def test_an_empty_selection_is_refused(tmp_path: Path, value: str) -> None:
    proc = run_main("check", "--select", value, str(EXAMPLE))
    assert proc.returncode == 2
    assert "--select" in proc.stderr.decode() and proc.stdout == b""
    (tmp_path / ".qrspi-guard.toml").write_text("select = []\n")
    assert run_main("check", ".", cwd=tmp_path).returncode == 2


def test_output_format_without_output_is_refused_before_any_work(tmp_path: Path) -> None:
    shutil.copytree(EXAMPLE, tmp_path / "example")
    f01 = tmp_path / "example" / DESIGN.relative_to(EXAMPLE) / "quality-claude.finding-F01.md"
    before = f01.read_bytes().rstrip(b"\n")  # a missing trailing newline: --fix's work
    f01.write_bytes(before)
    proc = run_main("check", "example", "--output-format", "sarif", "--fix", "--write-status",
                    cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stdout == b"" and b"fixed" not in proc.stderr
    assert b"--output-format needs --output FILE" in proc.stderr
    assert f01.read_bytes() == before  # nothing was fixed first
    assert not list(tmp_path.rglob("*-guard.json"))


def test_a_broken_pipe_is_quiet_with_the_verdict_even_with_an_unbuffered_stdout(
        tmp_path: Path) -> None:
    """`check BIG | head -1` and `explain --list | head -1`: the same behaviour, quiet,
    with the verdict reached (check: 1, the example has errors; explain: 0). Python's
    unbuffered stdout (PYTHONUNBUFFERED=1, common in CI) took the first 64 KiB of a
    large report and dropped the rest silently."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    big = f'"{SCRIPT}" check "{EXAMPLE}" --format sarif'  # over 100 KiB: more than a pipe holds
    for cmd, verdict in ((f"{big} | (head -c 1 >/dev/null; exec 0<&-; sleep 0.5)", 1),
                         (f'"{SCRIPT}" explain --list | true', 0)):
        for unbuffered in (env, {k: v for k, v in env.items() if k != "PYTHONUNBUFFERED"}):
            proc = subprocess.run(["bash", "-c", cmd + '; exit "${PIPESTATUS[0]}"'],
                                  cwd=tmp_path, env=unbuffered, capture_output=True,
                                  timeout=120)
            assert proc.returncode == verdict, (cmd, proc.stderr)
            assert proc.stderr == b"", cmd


def test_stdin_filename_reports_only_the_buffer(tmp_path: Path) -> None:
    shutil.copytree(EXAMPLE, tmp_path / "example")
    rnd = tmp_path / "example" / DESIGN.relative_to(EXAMPLE)
    good = (rnd / "quality-claude.finding-F01.md").read_text().replace("corectness",
                                                                        "correctness")
    proc = run_main("check", "--stdin-filename", str(rnd / "quality-claude.finding-F01.md"),
                    "-", input=good.encode(), cwd=tmp_path)
    # the round's other defects (F02's category:, a silent reviewer) are not the buffer's
    assert proc.returncode == 0, proc.stdout
    assert proc.stdout.decode().splitlines() == ["1 round, 1 file: 0 errors, 0 warnings"]
    bad = run_main("check", "--stdin-filename", str(rnd / "quality-claude.finding-F01.md"),
                   "-", input=good.replace("correctness", "corectness").encode(),
                   cwd=tmp_path)
    assert bad.returncode == 1
    lines = bad.stdout.decode().splitlines()
    assert len(lines) == 2 and "change_type_out_of_enum" in lines[0]


def test_a_valid_buffer_in_a_new_round_gets_no_unreadable_dir(tmp_path: Path) -> None:
    run_dir = tmp_path / "docs" / "run"
    run_dir.mkdir(parents=True)
    shutil.copy(EXAMPLE / "docs/qrspi/2026-05-17-auth-rework/config.md", run_dir)
    good = (DESIGN / "quality-claude.finding-F01.md").read_text().replace(
        "corectness", "correctness").replace("round: 2", "round: 3").replace("R2-", "R3-")
    path = run_dir / "reviews" / "design" / "round-03" / "quality-claude.finding-F01.md"
    proc = run_main("check", "--stdin-filename", str(path), "-", input=good.encode(),
                    cwd=tmp_path)
    assert b"unreadable_dir" not in proc.stdout
    assert proc.returncode == 0, proc.stdout


def test_hook_typed_at_a_terminal_says_what_it_reads_instead_of_waiting() -> None:
    import pty

    leader, follower = pty.openpty()
    try:
        proc = subprocess.run([str(SCRIPT), "hook"], stdin=follower, capture_output=True,
                              timeout=30)
    finally:
        os.close(follower)
        os.close(leader)
    assert proc.returncode == 0
    assert b"stdin is a terminal" in proc.stderr and b"hook --help" in proc.stderr
