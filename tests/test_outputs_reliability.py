"""check's outputs under faults (issue 12: 8, 9, 10, 11, 16, 18 and the fault injection
of check's write paths): `--output`, status files, `--fix`, the step summary and stdout
keep the old state or the new one; names that are not UTF-8 and `::` lines are safe.

Faults are injected with ``QRSPI_GUARD_WRITE_FAULT=ACTION@STEP[:NAME]``
(qrspi_guard/output/files.py); real full and read-only file systems use a tiny tmpfs
where mounting is allowed (root), and skip cleanly elsewhere.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support import FIXTURES, SCRIPT, Run, run_cli, run_main

EXAMPLE = FIXTURES / "example"
STEPS = ("create", "write", "sync", "rename")
ERRORS = {"enospc": b"No space left on device", "erofs": b"Read-only file system",
          "eacces": b"Permission denied", "eio": b"Input/output error"}


def faulty(spec: str) -> dict[str, str]:
    return {"QRSPI_GUARD_WRITE_FAULT": spec}


def temps(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith(".guard-"))


# -- --output (9) -----------------------------------------------------------------------


def test_a_run_that_cannot_start_leaves_the_previous_report(tmp_path: Path) -> None:
    out = tmp_path / "guard.sarif"
    out.write_text("previous report\n")
    proc = run_main("check", "--format", "sarif", "--output", str(out), "no/such/path")
    assert proc.returncode == 2
    assert out.read_text() == "previous report\n"


@pytest.mark.parametrize("step", STEPS)
@pytest.mark.parametrize("error", sorted(ERRORS))
def test_an_output_error_at_any_step_leaves_the_previous_report_and_no_temp_file(
        tmp_path: Path, step: str, error: str) -> None:
    out = tmp_path / "guard.json"
    out.write_text("previous report\n")
    proc = run_cli("check", "--format", "json", "--output", str(out), str(EXAMPLE),
                   env=faulty(f"{error}@{step}:guard.json"))
    assert proc.returncode == 2
    err = proc.stderr.decode()
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"cannot write {out}: " in err and ERRORS[error].decode() in err
    assert "the previous file, if any, is unchanged" in err
    assert out.read_text() == "previous report\n"
    assert temps(tmp_path) == []


@pytest.mark.parametrize("step", STEPS)
def test_an_interrupted_system_call_is_retried_and_the_new_report_written(
        tmp_path: Path, step: str) -> None:
    out = tmp_path / "guard.json"
    out.write_text("previous report\n")
    proc = run_cli("check", "--format", "json", "--output", str(out), str(EXAMPLE),
                   env=faulty(f"eintr@{step}"))
    assert proc.returncode == 1, proc.stderr
    assert json.loads(out.read_text())["summary"]["errors"] == 3
    assert temps(tmp_path) == []


@pytest.mark.parametrize("step", [*STEPS, "dirsync"])
def test_a_kill_at_any_step_leaves_the_old_report_or_the_new_one(tmp_path: Path,
                                                                  step: str) -> None:
    out = tmp_path / "guard.json"
    out.write_text("previous report\n")
    proc = run_cli("check", "--format", "json", "--output", str(out), str(EXAMPLE),
                   env=faulty(f"kill@{step}"))
    assert proc.returncode == -9
    text = out.read_text()
    if step == "dirsync":  # after the rename: the new report
        assert json.loads(text)["summary"]["errors"] == 3
    else:
        assert text == "previous report\n"
    # at most a hidden temp file beside it, which the next run does not mind
    assert all(name.endswith(".tmp") for name in temps(tmp_path))
    again = run_main("check", "--format", "json", "--output", str(out), str(EXAMPLE))
    assert again.returncode == 1 and json.loads(out.read_text())["summary"]["errors"] == 3


def test_output_through_a_symlink_to_a_device_or_a_directory_is_refused_with_one_line(
        tmp_path: Path) -> None:
    """cli.md "Files the guard reads and writes": a link (dangling or not), a device
    other than a FIFO and a directory are refused, exit 2; nothing is written through."""
    real = tmp_path / "real.json"
    real.write_text("old\n")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    dangling = tmp_path / "dangling.json"
    dangling.symlink_to(tmp_path / "nowhere.json")
    for target, words in ((link, b"a symbolic link"), (dangling, b"a symbolic link"),
                          ("/dev/null", b"a device"), (tmp_path, b"a directory")):
        proc = run_main("check", "--format", "json", "--output", str(target), str(EXAMPLE))
        assert proc.returncode == 2 and words in proc.stderr, proc.stderr
        assert len(proc.stderr.splitlines()) == 1
    assert real.read_text() == "old\n" and not (tmp_path / "nowhere.json").exists()


def test_a_really_full_disk_keeps_the_previous_report(tiny_fs: Path) -> None:
    out = tiny_fs / "guard.sarif"
    out.write_text("previous report\n")
    (tiny_fs / "filler").write_bytes(b"x" * (64 * 1024 - 8192))
    proc = run_main("check", "--format", "sarif", "--output", str(out), str(EXAMPLE))
    assert proc.returncode == 2 and b"No space left on device" in proc.stderr
    assert out.read_text() == "previous report\n" and temps(tiny_fs) == []


# -- status files (18) ------------------------------------------------------------------


def example_copy(tmp_path: Path) -> tuple[Path, Path]:
    work = tmp_path / "ex"
    shutil.copytree(EXAMPLE, work, symlinks=True)
    design = next(work.rglob("reviews/design"))
    return work, design


@pytest.mark.parametrize("step", STEPS)
@pytest.mark.parametrize("error", ["enospc", "erofs", "eacces"])
def test_a_status_file_that_cannot_be_written_is_exit_2_with_the_old_file_and_no_temp(
        tmp_path: Path, step: str, error: str) -> None:
    work, design = example_copy(tmp_path)
    assert run_main("check", "--write-status", str(work)).returncode == 1
    status = design / "round-02-guard.json"
    old = status.read_bytes()
    f = design / "round-02" / "quality-claude.finding-F01.md"
    f.write_text(f.read_text().replace("corectness", "correctness"))
    proc = run_cli("check", "--write-status", str(work),
                   env=faulty(f"{error}@{step}:round-02-guard.json"))
    assert proc.returncode == 2
    err = proc.stderr.decode()
    assert "cannot write the status file of" in err and "round-02" in err
    assert "Traceback" not in err and ERRORS[error].decode() in err
    assert status.read_bytes() == old
    assert temps(design) == []
    # the other rounds' status files were still written
    assert json.loads((design / "round-01-guard.json").read_text())["status"] == "ok"
    # and the next run tells the new state
    assert run_main("check", "--write-status", str(work)).returncode == 1
    assert "change_type_out_of_enum" not in status.read_text()


@pytest.mark.parametrize("step", STEPS)
def test_a_kill_while_writing_a_status_file_leaves_the_old_one(tmp_path: Path,
                                                                step: str) -> None:
    work, design = example_copy(tmp_path)
    run_main("check", "--write-status", str(work))
    status = design / "round-02-guard.json"
    old = status.read_bytes()
    proc = run_cli("check", "--write-status", "--ignore", "expected_tag_no_output",
                   str(work), env=faulty(f"kill@{step}:round-02-guard.json"))
    assert proc.returncode == -9
    assert status.read_bytes() == old
    # a hidden temp file at most, which the tree walk ignores
    assert run_main("check", str(work)).returncode == 1


# -- --fix (16) -------------------------------------------------------------------------


def untidy(run: Run) -> tuple[Path, Path]:
    p = run.finding("goals", 1, "quality-claude")
    p.write_bytes(p.read_bytes() + b"\n\n")
    q = run.finding("goals", 1, "quality-claude", n=2)
    q.write_bytes(q.read_bytes() + b"\n")
    run.clean("goals", 1, "scope-claude")
    return p, q


@pytest.mark.parametrize("step", STEPS)
@pytest.mark.parametrize("error", ["erofs", "enospc", "eacces"])
def test_fix_says_which_file_could_not_be_fixed_and_why_and_fixes_the_others(
        run: Run, step: str, error: str) -> None:
    p, q = untidy(run)
    before = p.read_bytes()
    proc = run_cli("check", "--fix", str(run.root),
                   env=faulty(f"{error}@{step}:{p.name}"))
    assert proc.returncode == 2
    err = proc.stderr.decode()
    assert f"cannot fix {p}: {ERRORS[error].decode()}; it is left as it was" in err
    assert f"fixed trailing newline: {q}" in err
    assert err.splitlines()[-1] == ("qrspi-guard check: error: 1 file could not be fixed "
                                    "(see above); each is left as it was")
    assert "Traceback" not in err
    assert p.read_bytes() == before and q.read_bytes().endswith(b".\n")
    assert temps(p.parent) == []
    assert b"trailing_newline" in proc.stdout  # still reported: it is still there


def test_fix_on_a_read_only_file_system_leaves_every_file_intact(tiny_fs: Path) -> None:
    run = Run(tiny_fs / "art").config()
    p, q = untidy(run)
    before = {x: x.read_bytes() for x in (p, q)}
    subprocess.run(["mount", "-o", "remount,ro", str(tiny_fs)], check=True)
    proc = run_main("check", "--fix", str(run.root))
    assert proc.returncode == 2
    assert proc.stderr.count(b"Read-only file system") == 2
    assert {x: x.read_bytes() for x in (p, q)} == before


def test_a_kill_during_fix_leaves_the_file_old_or_new(run: Run) -> None:
    p, _ = untidy(run)
    before = p.read_bytes()
    for step in (*STEPS, "dirsync"):
        p.write_bytes(before)
        proc = run_cli("check", "--fix", str(run.root), env=faulty(f"kill@{step}:{p.name}"))
        assert proc.returncode == -9
        assert p.read_bytes() in (before, before.rstrip(b"\n") + b"\n"), step
    doc = json.loads(run_main("check", "--format", "json", str(run.root)).stdout)
    assert doc["summary"]["failed"] is False  # hidden temp files are never judged


# -- the step summary -------------------------------------------------------------------


def many_errors(run: Run, n: int) -> None:
    for i in range(1, n + 1):
        run.finding("goals", 1, "quality-claude", n=i, severity="urgent",
                    change_type="corectness")


def test_the_step_summary_stays_below_1_mib_and_says_what_was_left_out(run: Run,
                                                                       tmp_path: Path) -> None:
    many_errors(run, 4000)  # 8,000 errors and more: 1.47 MB uncapped
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step output\n")
    proc = run_main("check", "--format", "github", "--output", str(tmp_path / "g.sarif"),
                   "--output-format", "sarif", str(run.root),
                   env={"GITHUB_STEP_SUMMARY": str(summary)}, timeout=300)
    assert proc.returncode == 1, proc.stderr
    data = summary.read_bytes()
    assert len(data) < 1024 * 1024
    assert data.startswith(b"earlier step output\n## qrspi-guard")
    last = data.decode().rstrip("\n").splitlines()[-1]
    assert "more rows left out to stay under GitHub's 1 MiB step summary limit" in last
    assert "this step's log" in last and "g.sarif" in last
    kept = data.count(b"\n| error |")
    left_out = int(last.split()[0])
    assert kept + left_out == 8001  # every error accounted for (+ the silent reviewer)


@pytest.mark.parametrize("error", ["enospc", "eio"])
def test_a_failed_step_summary_append_is_cut_back_and_only_warned(run: Run, tmp_path: Path,
                                                                 error: str) -> None:
    many_errors(run, 2)
    summary = tmp_path / "summary.md"
    summary.write_text("earlier\n")
    proc = run_cli("check", "--format", "github", str(run.root),
                   env={"GITHUB_STEP_SUMMARY": str(summary), **faulty(f"{error}@append")})
    assert proc.returncode == 1  # the gate's verdict, not the summary's fate
    assert b"qrspi-guard check: warning: step summary: cannot append to" in proc.stderr
    assert summary.read_text() == "earlier\n"


# -- standard output (18) ---------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["text", "json", "github", "sarif", "junit"])
@pytest.mark.parametrize("redirect", [">&-", ">/dev/full"])
def test_a_closed_or_full_stdout_is_exit_2_with_one_line(fmt: str, redirect: str) -> None:
    proc = subprocess.run(["bash", "-c", f'"$0" check --format {fmt} "$1" {redirect}',
                           str(SCRIPT), str(EXAMPLE)], capture_output=True, timeout=60)
    assert proc.returncode == 2
    err = proc.stderr.decode()
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith("qrspi-guard check: error: cannot write to standard output")


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_broken_pipe_is_quiet_and_exits_with_the_verdict(fmt: str) -> None:
    # the reader is gone before the guard writes (as `| head` is, after its line): the
    # example has errors, so the verdict is 1, said by nothing on stderr
    proc = subprocess.run(["bash", "-c", f'"$0" check --format {fmt} "$1" | true; '
                           'exit "${PIPESTATUS[0]}"', str(SCRIPT), str(EXAMPLE)],
                          capture_output=True, timeout=120)
    assert proc.returncode == 1
    assert proc.stderr == b""


# -- names that are not UTF-8 (8) and `::` at a line start (11) -------------------------


def odd_round(run: Run) -> Path:
    d = run.round_dir("research", 1)
    with open(bytes(d) + b"/notes-\xff.md", "wb") as fh:
        fh.write(b"x")
    run.clean("research", 1, "quality-claude")
    return d


def test_a_name_that_is_not_utf8_is_escaped_one_way_in_every_human_format(run: Run) -> None:
    odd_round(run)
    for fmt in ("text", "github", "junit"):
        proc = run_cli("check", "--format", fmt, str(run.root),
                       env={"PYTHONIOENCODING": "utf-8:strict"})
        assert proc.returncode == 1, (fmt, proc.stderr)
        assert b"notes-\\xff.md" in proc.stdout, fmt
        proc.stdout.decode("utf-8")  # valid UTF-8


def test_json_keeps_a_name_that_is_not_utf8_lossless(run: Run) -> None:
    d = odd_round(run)
    doc = json.loads(run_main("check", "--format", "json", str(run.root)).stdout)
    (diag,) = doc["diagnostics"]
    assert os.fsencode(diag["path"]) == bytes(d) + b"/notes-\xff.md"
    assert os.fsencode(diag["file"]) == b"notes-\xff.md"


def test_an_ascii_only_terminal_never_crashes_the_text_output(run: Run) -> None:
    run.finding("goals", 1, "quality-claude", change_type="corréctness")
    proc = run_cli("check", str(run.root), env={"PYTHONIOENCODING": "ascii:strict"})
    assert proc.returncode == 1 and b"change_type_out_of_enum" in proc.stdout
    assert proc.stderr == b""


COMMAND = "::error file=x,line=1::pwned.md"


def command_lines(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.lstrip().startswith("::")]


def test_no_line_of_any_non_github_output_starts_with_a_workflow_command(run: Run,
                                                                         tmp_path: Path) -> None:
    d = run.round_dir("research", 1)
    (d / COMMAND).write_text("x")
    (d / " ::warning::indented.md").write_text("x")
    run.clean("research", 1, "quality-claude")
    (run.root.parent / "::notice::dir").mkdir()
    shutil.copytree(run.root, run.root.parent / "::notice::dir" / "art")
    for fmt in ("text", "json", "sarif", "junit"):
        for extra in ((), ("--statistics",), ("--quiet",)):
            if extra == ("--statistics",) and fmt in ("sarif", "junit"):
                continue
            proc = run_main("check", "--format", fmt, *extra, ".", cwd=run.root.parent)
            assert proc.returncode == 1, proc.stderr
            out = proc.stdout.decode()
            assert command_lines(out) == [], (fmt, extra, command_lines(out))
            assert command_lines(proc.stderr.decode()) == []
    text = run_main("check", ".", cwd=run.root.parent).stdout.decode()
    assert "./::notice::dir/art/reviews/research/round-01/::error file=x,line=1::pwned.md: " \
           "error unknown_file_in_round_dir" in text
    # the github format is made of workflow commands, each escaped
    gh = run_main("check", "--format", "github", ".", cwd=run.root.parent).stdout.decode()
    assert all(ln.startswith(("::error ", "::warning ", "::notice ")) for ln in
               command_lines(gh))


def test_lockout_status_never_starts_a_line_with_a_workflow_command(tmp_path: Path) -> None:
    ledger = tmp_path / "lockout.jsonl"
    base = ["lockout", "--ledger", str(ledger)]
    assert run_main(*base, "author", "::error::pwned", "alice").returncode == 0
    out = run_main(*base, "status").stdout.decode()
    assert command_lines(out) == [] and "./::error::pwned" in out


def test_a_kill_before_the_step_summary_append_leaves_it_as_it_was(run: Run,
                                                                   tmp_path: Path) -> None:
    many_errors(run, 2)
    summary = tmp_path / "summary.md"
    summary.write_text("earlier\n")
    proc = run_cli("check", "--format", "github", str(run.root),
                   env={"GITHUB_STEP_SUMMARY": str(summary), **faulty("kill@append")})
    assert proc.returncode == -9
    assert summary.read_text() == "earlier\n"
    run_main("check", "--format", "github", str(run.root),
            env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert summary.read_text().startswith("earlier\n## qrspi-guard")


ONE_SHOT = [
    ["schema"], ["matrix"], ["matrix", "--format", "json"], ["explain", "--list"],
    ["explain", "fnum_gap"], ["verdict", "absent.json"], ["check", "--show-settings"],
    ["check", "--statistics", str(EXAMPLE)],
]


#: what each one-shot command exits with when its reader goes away (its verdict)
VERDICT = {"verdict": 4, "check --statistics": 1}


@pytest.mark.parametrize("args", ONE_SHOT, ids=[" ".join(a[:2]) for a in ONE_SHOT])
@pytest.mark.parametrize("redirect", [">&-", ">/dev/full", "| true"])
def test_every_one_shot_command_without_a_stdout_exits_2_and_with_a_closed_pipe_its_verdict(
        tmp_path: Path, args: list[str], redirect: str) -> None:
    """A closed or full stdout is one line and exit 2; a closed pipe (the reader gone)
    is quiet, and the exit code is the command's verdict (cli.md)."""
    quoted = " ".join(f"'{a}'" for a in args)
    script = f'"$0" {quoted} {redirect}; exit "${{PIPESTATUS[0]}}"'
    proc = subprocess.run(["bash", "-c", script, str(SCRIPT)], cwd=tmp_path,
                          capture_output=True, timeout=60)
    err = proc.stderr.decode()
    if redirect == "| true":
        verdict = VERDICT.get(" ".join(args[:2]), VERDICT.get(args[0], 0))
        assert (proc.returncode, err) == (verdict, ""), (args, err)
        return
    assert proc.returncode == 2, (args, redirect, proc.stderr)
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith(f"qrspi-guard {args[0]}: error: cannot write to standard output"), err
