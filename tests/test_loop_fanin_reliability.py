"""`fan-in` under kills and concurrent runs (loop.md common rules): each output
old-or-new, in an order that never shows a kept list without its audit nor a halting
audit beside a kept list; the round lock serialises runs, the wait is bounded.

Kills are injected with ``QRSPI_GUARD_WRITE_FAULT=kill@STEP:NAME``
(qrspi_guard/output/files.py) into the installed console script.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from qrspi_guard.engine.roundlock import round_lock
from tests.genkit import AUDIT, KEPT, audit_json, fanin_round, new_run, put, sidecar_md
from tests.support import SCRIPT, UNSET, run_cli, run_main

Q = "quality-claude"
STATUS = "round-01-guard.json"


def _round(tmp_path: Path) -> Path:
    """A verified round whose first fan-in kept one finding (the old pair)."""
    d = fanin_round(new_run(tmp_path), "design", 1, [(Q, 1, "correctness", 90)],
                    cleans=["scope-claude"])
    assert run_cli("fan-in", str(d)).returncode == 0
    return d


def _state(d: Path) -> tuple[bytes | None, bytes | None]:
    def read(name: str) -> bytes | None:
        try:
            return (d / name).read_bytes()
        except FileNotFoundError:
            return None
    return read(AUDIT), read(KEPT)


def _kept(d: Path, *names: str) -> bytes:
    return b"".join(os.fsencode(os.path.join(os.path.realpath(d), n)) + b"\n" for n in names)


def _killed(d: Path, spec: str) -> None:
    proc = run_cli("fan-in", str(d), env={"QRSPI_GUARD_WRITE_FAULT": spec})
    assert proc.returncode == -9, proc.stderr


STEPS = ("create", "write", "sync", "rename")


@pytest.mark.parametrize("step", STEPS)
@pytest.mark.parametrize("target", [AUDIT, KEPT, STATUS])
def test_a_kill_at_any_step_of_the_clean_path_leaves_old_or_new_in_order(
        tmp_path: Path, step: str, target: str) -> None:
    d = _round(tmp_path)
    old = _state(d)
    assert old == (audit_json(1, 1, 0).encode(), _kept(d, f"{Q}.finding-F01.md"))
    put(d, f"{Q}.finding-F02.md", (d / f"{Q}.finding-F01.md").read_text()
        .replace("R1-F01", "R1-F02"))
    put(d, f"{Q}.finding-F02.score.md", sidecar_md(95))
    new = (audit_json(2, 2, 0).encode(), _kept(d, f"{Q}.finding-F01.md", f"{Q}.finding-F02.md"))
    _killed(d, f"kill@{step}:{target}")
    got = _state(d)
    expected = {AUDIT: old, KEPT: (new[0], old[1]), STATUS: new}[target]
    assert got == expected
    assert run_cli("fan-in", str(d)).returncode == 0  # the next run completes the pair
    assert _state(d) == new


@pytest.mark.parametrize("spec", ["kill@unlink:" + KEPT] + [f"kill@{s}:{AUDIT}" for s in STEPS])
def test_a_kill_on_the_halt_path_never_leaves_a_halting_audit_beside_a_kept_list(
        tmp_path: Path, spec: str) -> None:
    d = _round(tmp_path)
    old = _state(d)
    os.unlink(d / f"{Q}.finding-F01.score.md")
    _killed(d, spec)
    audit, kept = _state(d)
    assert audit == old[0]  # the audit is still the old, clean one
    assert kept == (old[1] if spec.startswith("kill@unlink") else None)
    assert run_cli("fan-in", str(d)).returncode == 1
    audit, kept = _state(d)
    assert kept is None and audit == audit_json(1, 0, 0, [("R1-F01", "missing_sidecar")]).encode()


def test_a_second_run_waits_for_the_first_and_then_runs(tmp_path: Path) -> None:
    d = fanin_round(new_run(tmp_path), "design", 1, [(Q, 1, "correctness", 90)],
                    cleans=["scope-claude"])
    env = {k: v for k, v in os.environ.items() if k not in UNSET}
    with round_lock(str(d)):
        procs = [subprocess.Popen([str(SCRIPT), "fan-in", str(d)], stderr=subprocess.PIPE,
                                  stdout=subprocess.DEVNULL, env=env) for _ in range(2)]
        for p in procs:
            assert p.stderr is not None
            line = p.stderr.readline()  # each says it waits, while the lock is held
            assert b"waiting for the round lock on" in line
        assert _state(d) == (None, None)
    for p in procs:
        assert p.wait(timeout=60) == 0
        assert p.stderr is not None
        p.stderr.close()
    assert _state(d) == (audit_json(1, 1, 0).encode(), _kept(d, f"{Q}.finding-F01.md"))


def test_two_runs_started_together_leave_one_consistent_pair(tmp_path: Path) -> None:
    d = fanin_round(new_run(tmp_path), "design", 1, [(Q, 1, "correctness", 90),
                                                     (Q, 2, "style", 10)],
                    cleans=["scope-claude"])
    env = {k: v for k, v in os.environ.items() if k not in UNSET}
    procs = [subprocess.Popen([str(SCRIPT), "fan-in", str(d)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, env=env) for _ in range(3)]
    assert [p.wait(timeout=60) for p in procs] == [0, 0, 0]
    assert _state(d) == (audit_json(2, 1, 1).encode(), _kept(d, f"{Q}.finding-F01.md"))
    assert not [p.name for p in d.iterdir() if p.name.startswith(".guard-")]


def test_the_wait_for_the_lock_is_bounded_and_names_the_lock(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from qrspi_guard.loop import fanin_write

    d = fanin_round(new_run(tmp_path), "design", 1, [(Q, 1, "correctness", 90)])
    assert 1 <= fanin_write.LOOP_LOCK_WAIT <= 60  # loop.md: at least a second, at most a minute
    monkeypatch.setattr(fanin_write, "LOOP_LOCK_WAIT", 0.05)
    with round_lock(str(d)):
        proc = run_main("fan-in", str(d))
    assert proc.returncode == 2
    assert b"the round lock on" in proc.stderr and b"is held by another run" in proc.stderr
    assert _state(d) == (None, None)


def test_an_audit_that_cannot_be_written_leaves_no_kept_list_and_still_names_the_halt(
        tmp_path: Path) -> None:
    d = fanin_round(new_run(tmp_path), "design", 1, [(Q, 1, "correctness", 90)],
                    cleans=["scope-claude"])
    (d / AUDIT).mkdir()
    proc = run_main("fan-in", str(d))
    assert proc.returncode == 2 and not (d / KEPT).exists()
    assert b"cannot write" in proc.stderr
    os.unlink(d / f"{Q}.finding-F01.score.md")
    proc = run_main("fan-in", str(d))
    assert proc.returncode == 1 and b"halt: missing_sidecar" in proc.stderr
    assert not [p.name for p in d.iterdir() if p.name.startswith(".guard-")]
