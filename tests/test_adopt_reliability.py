"""adopt and undo killed at any write, failing at one, or run at once: running the
command again always finishes the job, and undo always gives back the scripts as they
were. Kills go through the console script's fault seam
(``QRSPI_GUARD_WRITE_FAULT=kill@K``: SIGKILL at the K-th disk step)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.adoptkit import KNOWN, adopt, checkout, git, scripts_state
from tests.support import SCRIPT

FAULT = "QRSPI_GUARD_WRITE_FAULT"


def _sweep(tmp_path: Path, command: tuple[str, ...], every: int) -> int:
    """Kill *command* at steps 1, 1 + every, ...; after each kill, the same command
    again completes, and undo restores the checkout. Returns the kills made."""
    k, kills = 1, 0
    while True:
        co = checkout(tmp_path / f"k{k}")
        before = scripts_state(co)
        if "--undo" in command:
            assert adopt(co).returncode == 0
        proc = adopt(co, *command, env={FAULT: f"kill@{k}"})
        if proc.returncode != -9:  # the command had fewer steps: it finished
            assert proc.returncode == 0, proc.stderr
            break
        kills += 1
        again = adopt(co, *command)
        assert again.returncode == 0, (k, again.stderr)
        if "--undo" not in command:
            assert adopt(co).stdout.count(b"already adopted") == 4, k
        undo = adopt(co, "--undo")
        assert undo.returncode == 0, (k, undo.stderr)
        assert scripts_state(co) == before, k
        assert git(co, "status", "--porcelain") == "", k
        assert not (co / ".git" / "qrspi-guard-adopt").exists(), k
        k += every
    return kills


@pytest.mark.parametrize("command", [(), ("--undo",)], ids=["adopt", "undo"])
def test_a_kill_at_some_write_is_finished_by_running_again(tmp_path: Path,
                                                           command: tuple[str, ...]) -> None:
    assert _sweep(tmp_path, command, every=7) >= 5


@pytest.mark.slow
@pytest.mark.parametrize("command", [(), ("--undo",)], ids=["adopt", "undo"])
def test_a_kill_at_every_write_is_finished_by_running_again(tmp_path: Path,
                                                            command: tuple[str, ...]) -> None:
    assert _sweep(tmp_path, command, every=1) >= 30


@pytest.mark.parametrize("fault", ["enospc@rename:verifier-fan-in.sh", "eio@3", "erofs@9"])
def test_a_failed_write_is_one_line_and_the_next_run_finishes(tmp_path: Path,
                                                              fault: str) -> None:
    co = checkout(tmp_path)
    before = scripts_state(co)
    proc = adopt(co, env={FAULT: fault})
    assert proc.returncode == 2
    assert proc.stderr.count(b"\n") == 1 and b"cannot write" in proc.stderr
    assert adopt(co).returncode == 0
    assert adopt(co, "--undo").returncode == 0
    assert scripts_state(co) == before


def test_adopts_and_undos_at_once_leave_one_consistent_state(tmp_path: Path) -> None:
    for attempt in range(6):
        co = checkout(tmp_path / str(attempt))
        before = scripts_state(co)
        args = [[str(SCRIPT), "adopt", str(co), "--known", str(KNOWN)]] * 3
        if attempt % 2:
            args = args + [[str(SCRIPT), "adopt", "--undo", str(co)]] * 2
        procs = [subprocess.Popen(a, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                 for a in args]
        for p in procs:
            out, err = p.communicate(timeout=120)
            assert p.returncode == 0, err
        # whoever came last, the checkout is adopted or not, never half: the next
        # adopt reports every script adopted, and undo gives back every byte
        again = adopt(co)
        assert again.returncode == 0 and again.stdout.count(b"already adopted") + \
            again.stdout.count(b"wrapped") == 4
        assert adopt(co, "--undo").returncode == 0
        assert scripts_state(co) == before
