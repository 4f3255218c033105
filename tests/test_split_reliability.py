"""split under a kill, a broken disk, concurrent use and hostile input, through the
installed console script (issue 12 #4, #5, #14 and #1; split.md "All or nothing").

Faults are injected with ``QRSPI_GUARD_SPLIT_FAULT`` (qrspi_guard/split/faults.py): the
process SIGKILLs or SIGSTOPs itself at a step, or gets an OS error there. Every wait is
on the program's own signals (its exit, its stop, its stderr line, a FIFO's open)."""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from tests.support import FIXTURES, SCRIPT, run_cli, run_main

TAG = "quality-codex"
FIXTURE = FIXTURES / "causes" / "split_would_mix_attempts"
ROUND = Path("reviews") / "research" / "round-01"

pytestmark = pytest.mark.skipif(not SCRIPT.exists(), reason="console script not installed")


def listing(path: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(path.iterdir())}


def make_run(tmp_path: Path, name: str, stale: bool) -> Path:
    """A research run expecting quality-claude and quality-codex: with *stale*, codex's
    earlier attempt (one finding) is in the round, else only claude's clean sentinel."""
    base = tmp_path / name
    shutil.copytree(FIXTURE, base)
    if not stale:
        (base / ROUND / "quality-codex.finding-F01.md").unlink()
    return base


def split(base: Path, *extra: str, fault: str | None = None,
          stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    """With a *fault* (which may kill the process), the console script in a subprocess;
    without, the same entry point in this process."""
    src = "-" if stdin is not None else "stdout.txt"
    if fault:
        return run_cli("split", src, str(ROUND), TAG, *extra, cwd=base,
                       env={"QRSPI_GUARD_SPLIT_FAULT": fault}, input=stdin)
    return run_main("split", src, str(ROUND), TAG, *extra, cwd=base,
                    env={"QRSPI_GUARD_SPLIT_FAULT": None}, input=stdin)


def check(base: Path) -> tuple[int, list[str]]:
    proc = run_main("check", "--format", "json", str(ROUND), cwd=base)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, sorted({d["cause"] for d in json.loads(proc.stdout)["diagnostics"]})


# -- a kill at every step -------------------------------------------------------------


@pytest.mark.parametrize("stale", [False, True], ids=["fresh", "replace"])
def test_a_kill_at_any_step_leaves_old_new_or_split_incomplete_and_the_next_split_repairs(
        tmp_path: Path, stale: bool) -> None:
    ref = make_run(tmp_path, "ref", stale)
    old, old_check = listing(ref / ROUND), check(ref)
    assert split(ref, "--replace").returncode == 0
    new, new_check = listing(ref / ROUND), check(ref)
    assert new_check == (0, [])
    killed = 0
    for k in range(1, 40):
        base = make_run(tmp_path, f"k{k}", stale)
        proc = split(base, "--replace", fault=f"kill@{k}")
        if proc.returncode == 0:  # k is past the last step: the run completed
            assert listing(base / ROUND) == new
            break
        assert proc.returncode == -signal.SIGKILL, proc.stderr
        killed += 1
        state, verdict = listing(base / ROUND), check(base)
        if state == old:
            assert verdict == old_check, k
        elif state == new:
            assert verdict == new_check, k
        else:  # anything in between is visible: never a pass
            assert verdict[0] == 1 and "split_incomplete" in verdict[1], k
        again = split(base, "--replace")
        assert again.returncode == 0, again.stderr
        assert listing(base / ROUND) == new and check(base) == new_check, k
    assert killed >= 10  # every step of the write path was reached


def test_a_kill_during_the_repair_is_repaired_by_the_split_after_it(tmp_path: Path) -> None:
    base = make_run(tmp_path, "run", stale=True)
    assert split(base, "--replace", fault="kill@place").returncode == -signal.SIGKILL
    proc = split(base, "--replace", fault="kill@recover-place")
    assert proc.returncode == -signal.SIGKILL
    assert "split_incomplete" in check(base)[1]
    proc = split(base, "--replace")
    assert proc.returncode == 0, proc.stderr
    assert b"completed an interrupted split of quality-codex" in proc.stderr
    assert check(base) == (0, [])


def test_the_repair_rolls_back_an_attempt_killed_before_its_commit(tmp_path: Path) -> None:
    base = make_run(tmp_path, "run", stale=True)
    before = listing(base / ROUND)
    assert split(base, "--replace", fault="kill@intent").returncode == -signal.SIGKILL
    assert "split_incomplete" in check(base)[1]
    proc = split(base)  # without --replace: the repair comes first, then the mixing rule
    assert proc.returncode == 1 and b"rolled back an interrupted split" in proc.stderr
    assert b"split_would_mix_attempts" in proc.stderr
    assert listing(base / ROUND) == before


# -- a broken disk --------------------------------------------------------------------


@pytest.mark.parametrize("fault,state", [
    ("enospc@write quality-codex.finding-F02.md", "old"),
    ("eacces@commit", "old"),
    ("eintr@sync-new", "old"),
    ("erofs@place quality-codex.finding-F02.md", "new"),
    ("eio@finish", "new"),
], ids=["enospc-write", "eacces-commit", "eintr-sync", "erofs-place", "eio-finish"])
def test_an_os_error_ends_in_the_old_state_or_the_new_and_check_tells_which(
        tmp_path: Path, fault: str, state: str) -> None:
    base = make_run(tmp_path, "run", stale=True)
    old = listing(base / ROUND)
    proc = split(base, "--replace", fault=fault)
    lines = proc.stderr.decode().splitlines()
    if state == "old":
        assert proc.returncode == 2 and len(lines) == 1 and "nothing was changed" in lines[0]
        assert listing(base / ROUND) == old and check(base) == (0, [])
        assert proc.stdout == b""
    else:
        assert proc.returncode == 0 and "succeeded on retry" in lines[0]
        assert listing(base / ROUND) != old and check(base) == (0, [])
        assert len(proc.stdout.splitlines()) == 2


def test_a_really_full_disk_leaves_the_round_as_it_was(tiny_fs: Path) -> None:
    base = tiny_fs / "run"
    shutil.copytree(FIXTURE, base)
    before = listing(base / ROUND)
    big = (base / ROUND / "quality-codex.finding-F01.md").read_bytes().replace(
        b"write-behind", b"x" * 60_000)  # more than the file system has left
    proc = split(base, "--replace", stdin=b"<<<FINDING-BOUNDARY>>>\n" + big)
    assert proc.returncode == 2 and b"No space left on device" in proc.stderr
    assert b"nothing was changed" in proc.stderr
    assert listing(base / ROUND) == before


def test_a_read_only_file_system_leaves_the_round_as_it_was(tiny_fs: Path) -> None:
    base = tiny_fs / "run"
    shutil.copytree(FIXTURE, base)
    before = listing(base / ROUND)
    subprocess.run(["mount", "-o", "remount,ro", str(tiny_fs)], check=True)
    proc = split(base, "--replace")
    assert proc.returncode == 2 and b"Read-only file system" in proc.stderr
    assert listing(base / ROUND) == before


# -- concurrent splits into one round -------------------------------------------------


def popen(base: Path, src: str, *extra: str, fault: str | None = None) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if k != "QRSPI_GUARD_SPLIT_FAULT"}
    if fault:
        env["QRSPI_GUARD_SPLIT_FAULT"] = fault
    return subprocess.Popen([str(SCRIPT), "split", src, str(ROUND), TAG, *extra], cwd=base,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def other_attempt(base: Path) -> Path:
    """A second attempt of the reviewer: only the first finding, worded differently."""
    text = (base / "stdout.txt").read_bytes().split(b"<<<FINDING-BOUNDARY>>>\n")[1]
    path = base / "other.txt"
    path.write_bytes(b"<<<FINDING-BOUNDARY>>>\n" + text.replace(b"write-behind", b"lazy"))
    return path


@pytest.mark.parametrize("same", [False, True], ids=["different-attempt", "same-attempt"])
def test_a_split_that_finds_the_round_locked_waits_and_never_mixes_attempts(
        tmp_path: Path, same: bool) -> None:
    base = make_run(tmp_path, "run", stale=False)
    a = popen(base, "stdout.txt", fault="stop@listed")  # lists the round, then freezes
    _, status = os.waitpid(a.pid, os.WUNTRACED)
    assert os.WIFSTOPPED(status)
    before = listing(base / ROUND)
    b = popen(base, "stdout.txt" if same else str(other_attempt(base)))
    assert b.stderr is not None
    assert b"waiting for another qrspi-guard split" in b.stderr.readline()
    assert listing(base / ROUND) == before  # B waits while A holds the round
    os.kill(a.pid, signal.SIGCONT)
    assert a.wait(timeout=60) == 0
    out, err = b.communicate(timeout=60)
    if same:  # B's files are already there byte for byte
        assert b.returncode == 0 and len(out.splitlines()) == 2
    else:
        assert b.returncode == 1 and b"split_would_mix_attempts" in err
    assert sorted(listing(base / ROUND)) == [
        "quality-claude.clean.md", "quality-codex.finding-F01.md", "quality-codex.finding-F02.md"]
    assert check(base) == (0, [])


def test_a_split_blocked_reading_a_fifo_does_not_mix_with_one_that_ran_meanwhile(
        tmp_path: Path) -> None:
    base = make_run(tmp_path, "run", stale=False)
    fifo = tmp_path / "reviewer.out"
    os.mkfifo(fifo)
    a = popen(base, str(fifo))  # blocks reading: its reviewer is still running
    b = run_cli("split", str(other_attempt(base)), str(ROUND), TAG, cwd=base)
    assert b.returncode == 0, b.stderr
    b_files = listing(base / ROUND)
    with open(fifo, "wb") as w:  # opens once A has opened it for reading
        w.write((base / "stdout.txt").read_bytes())
    out, err = a.communicate(timeout=60)
    assert a.returncode == 1 and b"split_would_mix_attempts" in err and out == b""
    assert listing(base / ROUND) == b_files


# -- input of any size ----------------------------------------------------------------


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


def test_split_of_dev_zero_ends_with_one_line_and_exit_1(tmp_path: Path) -> None:
    base = make_run(tmp_path, "run", stale=False)
    before = listing(base / ROUND)
    proc = subprocess.run([str(SCRIPT), "split", "/dev/zero", str(ROUND), TAG], cwd=base,
                          capture_output=True, timeout=120, preexec_fn=_limit_memory)
    assert proc.returncode == 1
    (line,) = proc.stderr.decode().splitlines()
    assert "larger than 16 MiB" in line and "internal error" not in line
    assert listing(base / ROUND) == before


def test_unbounded_standard_input_ends_with_one_line_and_exit_1(tmp_path: Path) -> None:
    base = make_run(tmp_path, "run", stale=False)
    endless = subprocess.Popen(["yes", "<<<FINDING-BOUNDARY>>>"], stdout=subprocess.PIPE)
    try:
        proc = subprocess.run([str(SCRIPT), "split", "-", str(ROUND), TAG], cwd=base,
                              stdin=endless.stdout, capture_output=True, timeout=120,
                              preexec_fn=_limit_memory)
    finally:
        assert endless.stdout is not None
        endless.stdout.close()
        endless.kill()
        endless.wait()
    assert proc.returncode == 1
    (line,) = proc.stderr.decode().splitlines()
    assert "standard input is larger than 16 MiB" in line


def test_a_directory_as_stdout_is_exit_2(tmp_path: Path) -> None:
    base = make_run(tmp_path, "run", stale=False)
    proc = run_cli("split", str(tmp_path), str(ROUND), TAG, cwd=base)
    assert proc.returncode == 2 and b"cannot read STDOUT" in proc.stderr


# -- numbers of any size --------------------------------------------------------------

BIG = "1" * 5000


@pytest.mark.parametrize("field,value,cause", [
    ("finding_id", f"R{BIG}-F01", "finding_id_malformed"),
    ("finding_id", f"R1-F{BIG}", "finding_id_malformed"),
    ("round", BIG, "round_not_integer"),
], ids=["finding-id-round", "finding-id-number", "round"])
def test_a_5000_digit_number_in_a_block_is_the_fields_named_cause(
        tmp_path: Path, field: str, value: str, cause: str) -> None:
    base = make_run(tmp_path, "run", stale=False)
    block = (base / "stdout.txt").read_bytes().split(b"<<<FINDING-BOUNDARY>>>\n")[1]
    lines = [f"{field}: {value}".encode() if line.startswith(field.encode() + b":") else line
             for line in block.split(b"\n")]
    proc = split(base, "--reject-invalid", stdin=b"<<<FINDING-BOUNDARY>>>\n" + b"\n".join(lines))
    assert b"internal error" not in proc.stderr
    assert proc.returncode == 1 and cause.encode() in proc.stderr


@pytest.mark.parametrize("value", [BIG, "0", "-1", "x", "1e3"])
def test_a_round_option_that_is_not_a_round_number_is_one_short_line_and_exit_2(
        tmp_path: Path, value: str) -> None:
    proc = run_cli("split", "-", str(tmp_path), TAG, "--round", value, input=b"NO_FINDINGS")
    assert proc.returncode == 2
    (line,) = proc.stderr.decode().splitlines()
    assert "is not a round number" in line and len(line) < 200
    assert list(tmp_path.iterdir()) == []
