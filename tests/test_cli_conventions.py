"""One tool, one voice: every command follows the conventions of
:mod:`qrspi_guard.cli.conventions` (cli.md "Conventions every command shares"): the one
error-line form, the exit codes, did-you-mean for every word a user types, colour by one
rule, a closed pipe that is quiet and keeps the verdict, a run with no rounds that
says so, and counted words in every summary line."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path

import click
import pytest

from qrspi_guard.cli import COMMANDS
from qrspi_guard.cli.conventions import BAD_ARGUMENT, Choice
from tests.support import FIXTURES, SCRIPT, UNSET, run_main

EXAMPLE = FIXTURES / "example"
EXAMPLE_FANIN = FIXTURES / "example-fanin"

#: the words that reach each command's own option parsing (its positionals first)
BAD_OPTION: dict[str, list[str]] = {
    "prepare": ["prepare", "01", "out", "--no-such-option"],
    "hook": ["hook", "install", "--no-such-option"],  # the hook call itself: docs/hook.md
}


def all_commands() -> list[tuple[str, click.Command]]:
    """Every command and subcommand, by its path (``lockout author``)."""
    from qrspi_guard.cli.group import cli

    ctx = click.Context(cli)
    out: list[tuple[str, click.Command]] = []

    def walk(path: str, command: click.Command) -> None:
        out.append((path, command))
        if isinstance(command, click.Group):
            for name, sub in command.commands.items():
                walk(f"{path} {name}", sub)

    for name in COMMANDS:
        command = cli.get_command(ctx, name)
        assert command is not None, name
        walk(name, command)
    return out


def one_line(err: bytes) -> str:
    text = err.decode()
    assert text.count("\n") == 1 and "Traceback" not in text, text
    return text


# -- the error line and the exit code of a bad argument ---------------------------------


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_subcommand_s_bad_option_is_one_error_line_with_its_bad_argument_code(
        command: str, tmp_path: Path) -> None:
    """``qrspi-guard COMMAND: error: ...``, exit 2, or the drop-in's upstream code (fan-in
    2, await, prepare and review-prep 1)."""
    args = BAD_OPTION.get(command, [command, "--no-such-option"])
    proc = run_main(*args, cwd=tmp_path)
    assert proc.returncode == BAD_ARGUMENT.get(command, 2), proc.stderr
    line = one_line(proc.stderr)
    assert line.startswith(f"qrspi-guard {command}: error: "), line
    assert "--no-such-option" in line, line
    assert proc.stdout == b""


@pytest.mark.parametrize(("args", "code", "words"), [
    (["fan-in"], 2, "usage: qrspi-guard fan-in"),                 # upstream pins "usage"
    (["fan-in", "-x"], 2, "must not begin with '-' (got: -x)"),
    (["fan-in", "no/such/dir"], 2, "does not exist"),
    (["await"], 1, "--round-dir"),
    (["await", "--round-dir"], 1, "--round-dir"),
    (["await", "--round-dir", "d", "--timeout", "nan"], 1, "--timeout"),
    (["prepare", "01"], 1, "<output-dir>"),
    (["prepare", "01", "-out"], 1, "<output-dir> must not begin with '-'"),
    (["prepare", "01", "out", "--base-ref", "-x"], 1, "--base-ref must not begin with '-'"),
    (["review-prep", "--step", "goals"], 1, "--round is required"),
    (["review-prep", "--step", "goals", "--round", "x", "--artifact-dir", "d"], 1, "--round"),
])
def test_the_drop_ins_keep_their_upstream_exit_code_and_pinned_words_for_a_bad_argument(
        tmp_path: Path, args: list[str], code: int, words: str) -> None:
    proc = run_main(*args, cwd=tmp_path)
    assert proc.returncode == code, proc.stderr
    line = one_line(proc.stderr)
    assert line.startswith(f"qrspi-guard {args[0]}: error: ") and words in line, line


def test_an_unknown_command_is_the_error_line_of_no_command() -> None:
    proc = run_main("nosuch")
    assert proc.returncode == 2
    assert one_line(proc.stderr).startswith("qrspi-guard: error: no such command 'nosuch' ")


def test_a_failure_of_the_core_is_the_command_s_error_line(tmp_path: Path) -> None:
    for args in (["check", "no/such/dir"], ["status", "no/such/dir"],
                 ["report", "no/such/dir", "-o", "r.html"]):
        proc = run_main(*args, cwd=tmp_path)
        assert proc.returncode == 2
        assert one_line(proc.stderr) == f"qrspi-guard {args[0]}: error: path not found: " \
            "no/such/dir\n"


# -- did you mean -----------------------------------------------------------------------


@pytest.mark.parametrize(("args", "meant"), [
    (["chek"], "'check'"),
    (["explian", "fnum_gap"], "'explain'"),
    (["lockout", "athor", "a", "b"], "'author'"),
    (["check", "--stirct"], "'--strict'"),
    (["status", "--formt", "json"], "'--format'"),
    (["matrix", "--format", "jsn"], "'json'"),
    (["check", "--format", "sarf"], "'sarif'"),
    (["check", "--protocol", "fanin"], "'fan-in'"),
    (["status", "--color", "allways"], "'always'"),
    (["lockout", "reject", "a", "--reviewer", "r", "--reason", "x", "--decision",
      "reasign"], "'reassign'"),
    (["matrix", "--step", "desgn"], "'design'"),
    (["check", "--step", "desgn", "."], "'design'"),
    (["explain", "change_typ"], "'missing_change_type'"),
])
def test_a_mistyped_subcommand_option_or_choice_names_the_nearest(
        tmp_path: Path, args: list[str], meant: str) -> None:
    proc = run_main(*args, cwd=tmp_path)
    assert proc.returncode == 2
    line = one_line(proc.stderr)
    assert f"; did you mean {meant}" in line, line


@pytest.mark.parametrize("args", [["zzzz"], ["check", "--zzzz"], ["matrix", "--format", "zz"],
                                  ["matrix", "--step", "zzzz"]])
def test_a_word_near_nothing_gets_no_suggestion(args: list[str]) -> None:
    proc = run_main(*args)
    assert proc.returncode == 2
    assert "did you mean" not in one_line(proc.stderr)


def test_every_choice_of_every_command_suggests() -> None:
    """No command can forget the rule: each choice option is the conventions' Choice."""
    plain = [f"{path} {p.name}" for path, command in all_commands() for p in command.params
             if isinstance(p.type, click.Choice) and not isinstance(p.type, Choice)]
    assert plain == []


# -- a closed pipe: quiet, with the verdict reached --------------------------------------


def closed_pipe(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    """Run the console script with stdout a pipe whose reader is already gone."""
    r, w = os.pipe()
    os.close(r)
    try:
        env = {k: v for k, v in os.environ.items() if k not in UNSET}
        return subprocess.run([str(SCRIPT), *args], stdout=w, stderr=subprocess.PIPE,
                              cwd=cwd, env=env, timeout=120)
    finally:
        os.close(w)


@pytest.mark.parametrize(("args", "verdict"), [
    (["explain", "--list"], 0),
    (["matrix"], 0),
    (["schema"], 0),
    (["check", str(EXAMPLE)], 1),
    (["check", str(EXAMPLE), "--format", "sarif"], 1),
    (["check", str(EXAMPLE), "--exit-zero"], 0),
    (["status", str(EXAMPLE)], 0),
])
def test_a_closed_pipe_is_quiet_and_the_exit_code_is_the_verdict_reached(
        args: list[str], verdict: int) -> None:
    """`explain --list | head -1`, `matrix | head -1`, `check | head`: nothing on
    stderr, and under `set -o pipefail` a gate that found errors reads 1, not 2."""
    proc = closed_pipe(*args)
    assert (proc.returncode, proc.stderr) == (verdict, b"")


def test_a_closed_pipe_keeps_verdict_s_and_lockout_s_own_codes(tmp_path: Path) -> None:
    (tmp_path / "findings.json").write_text('{"issue_count": 4, "issues": []}')
    assert closed_pipe("verdict", "findings.json", cwd=tmp_path).returncode == 3
    assert closed_pipe("verdict", "absent.json", cwd=tmp_path).returncode == 4
    ledger = ["--ledger", str(tmp_path / "l.jsonl")]
    for words in (["author", "src/a.ts", "alice"],
                  ["reject", "src/a.ts", "--reviewer", "carol", "--decision", "reassign",
                   "--reason", "x"]):
        assert run_main("lockout", *ledger, *words).returncode == 0
    proc = closed_pipe("lockout", *ledger, "check", "src/a.ts", "alice")
    assert (proc.returncode, proc.stderr) == (1, b"")  # refused


def test_a_full_stdout_is_still_one_line_and_exit_2() -> None:
    with open("/dev/full", "wb") as full:
        proc = subprocess.run([str(SCRIPT), "matrix"], stdout=full, stderr=subprocess.PIPE,
                              timeout=60)
    assert proc.returncode == 2
    assert one_line(proc.stderr).startswith(
        "qrspi-guard matrix: error: cannot write to standard output: ")


# -- an interrupt ------------------------------------------------------------------------


def test_ctrl_c_ends_a_one_shot_command_with_130(tmp_path: Path) -> None:
    """A command stopped by Ctrl-C exits 130 (128 + SIGINT) without a traceback; `watch`
    alone stops cleanly with 0 (tests/test_watch_e2e.py)."""
    if not os.path.exists(f"/proc/{os.getpid()}/wchan"):
        pytest.skip("no /proc/PID/wchan to see the command waiting for its input")
    proc = subprocess.Popen([str(SCRIPT), "split", "-", str(tmp_path), "quality-claude",
                             "--round", "1"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    try:
        # the program's own signal that it is running: it waits in read() on its stdin
        while "pipe_read" not in Path(f"/proc/{proc.pid}/wchan").read_text():
            assert time.monotonic() < deadline, "split never waited for its input"
            time.sleep(0.01)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130
    assert b"Traceback" not in err and out == b""
    assert list(tmp_path.iterdir()) == []


# -- a run that finds nothing says so ----------------------------------------------------


@pytest.mark.parametrize("args", [["check", "."], ["status", "."], ["report", ".", "-o",
                                                                     "r.html"]])
def test_a_run_with_no_rounds_warns_as_check_does_and_exits_0(
        tmp_path: Path, args: list[str]) -> None:
    proc = run_main(*args, cwd=tmp_path)
    assert proc.returncode == 0
    assert proc.stderr.decode() == (
        f"qrspi-guard {args[0]}: warning: no review rounds found under . (looked for "
        "reviews/<step>/round-NN/ and reviews/tasks/task-NN/round-NN/)\n")
    if args[0] == "report":
        assert (tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")


# -- colour: one rule --------------------------------------------------------------------


@pytest.mark.parametrize("command", ["check", "status"])
def test_every_colouring_command_follows_the_one_colour_rule(command: str) -> None:
    """NO_COLOR wins over FORCE_COLOR, FORCE_COLOR colours a pipe, --color/--no-color
    win over both, in every command that colours."""
    def coloured(*flags: str, **env: str) -> bool:
        proc = run_main(command, str(EXAMPLE), *flags, env=dict(env))
        return b"\x1b[" in proc.stdout

    assert not coloured()
    assert coloured(FORCE_COLOR="1")
    assert not coloured(FORCE_COLOR="1", NO_COLOR="1")
    assert coloured("--color", "always", NO_COLOR="1")
    assert not coloured("--no-color", FORCE_COLOR="1")
    assert not coloured("--color", "never", FORCE_COLOR="1")


# -- summary lines -----------------------------------------------------------------------


def test_summary_lines_count_in_words_and_agree_across_commands(tmp_path: Path) -> None:
    """check's summary, status's head line and the Markdown overview's say the same
    counts the same way: `9 rounds, 48 files: 5 errors, 0 warnings`, never `round(s)`."""
    paths = [str(EXAMPLE), str(EXAMPLE_FANIN)]
    check = run_main("check", *paths).stdout.decode().splitlines()[-1]
    status = run_main("status", *paths).stdout.decode().splitlines()[0]
    markdown = run_main("status", *paths, "--format", "markdown").stdout.decode()
    head = "9 rounds, 48 files: 5 errors, 0 warnings"
    assert check == head
    assert status == f"qrspi-guard status: {head}, 3 rounds halted"
    assert f"\n{head}, 3 rounds halted\n" in markdown
    one = run_main("check", str(next(EXAMPLE.rglob("design/round-01")))).stdout.decode()
    assert one.splitlines()[-1].startswith("1 round, ")
    for text in (check, status, markdown, one):
        assert not re.search(r"\w\(e?s\)", text), text
