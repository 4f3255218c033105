"""`qrspi-guard await` where only real processes show it (loop.md "await" and the common
rules): `--timeout` killing a command's whole process group, a kill of the drain itself
at each write (old-or-new, in order), and two drains of one round at once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import SCRIPT, UNSET, run_cli, run_main
from tests.test_loop_await import pending, stub, write_manifest

#: an upper bound for the waits below (each ends on the program's own signal first)
BOUND = 30.0


def _env(roots: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in UNSET}
    env["QRSPI_AWAIT_EXEC_ROOTS"] = str(roots)
    return env


def _until(predicate: object, what: str) -> None:
    """Wait for *predicate* (the program's own signal: a file, a process gone)."""
    deadline = time.monotonic() + BOUND
    while not predicate():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] == "Z"
    except FileNotFoundError:
        return True


@pytest.fixture
def rd(tmp_path: Path) -> Path:
    d = tmp_path / "round-01"
    (d / ".dispatch").mkdir(parents=True)
    return d


@pytest.fixture
def blocking(tmp_path: Path) -> Iterator[Path]:
    """A command that starts a grandchild in its group, says so, and blocks until its
    gate FIFO is opened (or forever)."""
    bin_dir = tmp_path / "bin"
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    stub(bin_dir, "block.sh", f'sleep 600 &\necho $! > "{tmp_path}/grandchild"\n'
         f'echo ran >> "{tmp_path}/runs"\n: > "{tmp_path}/started"\ncat "{gate}" >/dev/null\n'
         "kill $! 2>/dev/null\nexit 0")
    yield bin_dir / "block.sh"
    pid_file = tmp_path / "grandchild"
    if pid_file.exists():
        try:
            os.kill(int(pid_file.read_text()), signal.SIGKILL)
        except (ProcessLookupError, ValueError):
            pass


def test_a_command_past_its_timeout_is_killed_with_its_group(rd: Path, tmp_path: Path,
                                                            blocking: Path) -> None:
    write_manifest(rd, [pending("slow", str(blocking)),
                        {"tag": "fast", "mode": "first_party", "status": "dispatched"}])
    started = time.monotonic()
    proc = run_cli("await", "--round-dir", str(rd), "--timeout", "1",
                   env=_env(blocking.parent), timeout=BOUND)
    assert time.monotonic() - started < BOUND
    assert proc.returncode == 1
    assert b"await_cmd timed out after 1 s (--timeout); its process group was killed" \
        in proc.stderr
    entries = json.loads((rd / ".dispatch-manifest.json").read_text())
    assert [e["status"] for e in entries] == ["failed", "complete"]
    _until(lambda: _gone(int((tmp_path / "grandchild").read_text())), "the grandchild's end")
    assert (rd / ".dispatch").is_dir()  # kept after the failure


def _group_alive(pgid: int) -> bool:
    """Whether a process of group *pgid* still runs (zombies do not)."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[-1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[2]) == pgid:
            return True
    return False


def test_a_signal_landing_as_a_command_starts_still_kills_its_group(
        tmp_path: Path, blocking: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The window between a command's start and the wait that kills its group on an
    interruption: a SIGTERM sent there (here, by the process to itself, the instant the
    command has started) is held until that wait, so the group is killed all the same."""
    from qrspi_guard.loop.commands import run_command

    started: list[subprocess.Popen[bytes]] = []
    real = subprocess.Popen

    def start_then_term(*args: object, **kwargs: object) -> subprocess.Popen[bytes]:
        proc = real(*args, **kwargs)  # type: ignore[call-overload]
        started.append(proc)
        os.kill(os.getpid(), signal.SIGTERM)
        return proc  # type: ignore[no-any-return]

    def unwind(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    monkeypatch.setattr(subprocess, "Popen", start_then_term)
    old = signal.signal(signal.SIGTERM, unwind)
    try:
        with pytest.raises(SystemExit):
            run_command([str(blocking)], "await_cmd", str(tmp_path), BOUND)
    finally:
        signal.signal(signal.SIGTERM, old)
    assert started and started[0].returncode is not None  # killed and reaped
    _until(lambda: not _group_alive(started[0].pid), "the command's group to end")


def test_a_drain_killed_while_a_command_runs_kills_the_command_and_writes_nothing(
        rd: Path, tmp_path: Path, blocking: Path) -> None:
    manifest = write_manifest(rd, [pending("slow", str(blocking))]).read_bytes()
    proc = subprocess.Popen([str(SCRIPT), "await", "--round-dir", str(rd)],
                            env=_env(blocking.parent), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    _until((tmp_path / "started").exists, "the command's start")
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=BOUND)
    assert proc.returncode != 0 and b"Traceback" not in err
    _until(lambda: _gone(int((tmp_path / "grandchild").read_text())), "the grandchild's end")
    assert (rd / ".dispatch-manifest.json").read_bytes() == manifest  # old
    assert not (rd / ".round-complete.json").exists()


@pytest.mark.parametrize("step, manifest_new, complete_new", [
    ("rename:.dispatch-manifest.json", False, False),
    ("rename:.round-complete.json", True, False),
    ("rename:round-01-guard.json", True, True),
])
def test_a_kill_at_each_write_leaves_old_or_new_in_order(
        tmp_path: Path, step: str, manifest_new: bool, complete_new: bool) -> None:
    rd = tmp_path / "art" / "reviews" / "design" / "round-01"
    (rd / ".dispatch").mkdir(parents=True)
    (tmp_path / "art" / "config.md").write_text("---\nsecond_reviewer: false\n---\n")
    (rd / ".dispatch" / "quality-claude.raw").write_text("NO_FINDINGS")
    old_manifest = write_manifest(rd, [{"tag": "quality-claude", "mode": "first_party",
                                        "status": "dispatched"}]).read_bytes()
    old_complete = b'{"stale": true}\n'
    (rd / ".round-complete.json").write_bytes(old_complete)
    env = {k: v for k, v in os.environ.items() if k not in UNSET}
    env["QRSPI_GUARD_WRITE_FAULT"] = f"kill@{step}"
    proc = run_cli("await", "--round-dir", str(rd), env=env, timeout=BOUND)
    assert proc.returncode == -signal.SIGKILL
    manifest = (rd / ".dispatch-manifest.json").read_bytes()
    complete = (rd / ".round-complete.json").read_bytes()
    assert (manifest != old_manifest) is manifest_new
    assert (complete != old_complete) is complete_new
    if manifest_new:
        assert json.loads(manifest)[0]["status"] == "complete-clean"
    if complete_new:
        assert json.loads(complete)["clean"] == 1
        assert not (rd / ".dispatch").exists()  # removed after the summary, before status
    else:
        assert (rd / ".dispatch" / "quality-claude.raw").exists()
    # a rerun completes what the kill interrupted
    assert run_cli("await", "--round-dir", str(rd), timeout=BOUND).returncode == 0
    assert json.loads((rd / ".round-complete.json").read_bytes())["clean"] == 1
    assert (rd.parent / "round-01-guard.json").exists()


def test_two_drains_of_one_round_run_the_commands_once(rd: Path, tmp_path: Path,
                                                      blocking: Path) -> None:
    write_manifest(rd, [pending("slow", str(blocking))])
    env = _env(blocking.parent)
    first = subprocess.Popen([str(SCRIPT), "await", "--round-dir", str(rd)], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _until((tmp_path / "started").exists, "the first drain's command")
    second = subprocess.Popen([str(SCRIPT), "await", "--round-dir", str(rd)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert second.stderr is not None
    line = second.stderr.readline()  # the second run says it waits: it overlaps the first
    assert b"waiting for another run" in line
    with open(tmp_path / "gate", "wb"):
        pass  # release the first drain's command
    out1, _ = first.communicate(timeout=BOUND)
    out2, err2 = second.communicate(timeout=BOUND)
    assert first.returncode == 0 and second.returncode == 0, err2
    assert (tmp_path / "runs").read_text() == "ran\n"  # the commands ran once
    assert b"drained 1 background" in out1 and b"drained 0 background" in out2
    assert len(line + err2 + out2) < 2048


def test_a_second_drain_gives_up_after_the_wait_naming_the_lock(
        rd: Path, tmp_path: Path, blocking: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_manifest(rd, [pending("slow", str(blocking))])
    first = subprocess.Popen([str(SCRIPT), "await", "--round-dir", str(rd)],
                             env=_env(blocking.parent), stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    try:
        _until((tmp_path / "started").exists, "the first drain's command")
        monkeypatch.setattr("qrspi_guard.loop.awaiting.LOCK_WAIT", 1.0)
        proc = run_main("await", "--round-dir", str(rd))
        assert proc.returncode == 1
        assert b"another await is draining" in proc.stderr and b".dispatch/" in proc.stderr
    finally:
        with open(tmp_path / "gate", "wb"):
            pass
        first.wait(timeout=BOUND)
    assert (tmp_path / "runs").read_text() == "ran\n"


def test_a_drain_waits_for_the_round_lock_then_names_it(
        rd: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from qrspi_guard.engine.roundlock import round_lock

    write_manifest(rd, [])
    monkeypatch.setattr("qrspi_guard.loop.awaiting.LOCK_WAIT", 1.0)
    holder = subprocess.Popen(
        ["python3", "-c", "import fcntl, os, sys\n"
         f"fd = os.open({str(rd)!r}, os.O_RDONLY)\nfcntl.flock(fd, fcntl.LOCK_EX)\n"
         "print('held', flush=True)\nsys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
        proc = run_main("await", "--round-dir", str(rd))
        assert proc.returncode == 1 and b"round lock" in proc.stderr
        assert not (rd / ".round-complete.json").exists()
    finally:
        holder.communicate(b"", timeout=BOUND)
    with round_lock(str(rd), timeout=1.0):
        pass  # released with its holder
    assert run_main("await", "--round-dir", str(rd)).returncode == 0
