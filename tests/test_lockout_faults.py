"""The lockout ledger under hostile input and a failing disk (issue 12, #13 and #14).

Corrupt lines of any shape name their line; a ledger that is not a regular file, or is
over the size cap, is refused at once (never a hang, never memory exhausted); and an
append that fails or is killed at any step leaves the old ledger or the new one, which
the next command tells apart.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qrspi_guard.lockout import ledger as ledger_mod
from qrspi_guard.lockout.ledger import MAX_LEDGER_BYTES, Ledger, LedgerError, parse_line
from qrspi_guard.lockout.state import plan_author, plan_reject
from tests.support import run_main

SCRIPT = Path(sys.executable).parent / "qrspi-guard"
ART = "src/auth.ts"
GOOD_LINE = ('{"seq":1,"at":"2026-01-01T00:00:00Z","event":"authored",'
             '"artifact":"src/auth.ts","agent":"A"}')


def run(cwd: Path, *args: str, timeout: float = 60,
        process: bool = False) -> subprocess.CompletedProcess[str]:
    """`lockout` through the console script's entry point in this process, or with
    *process* in a subprocess of the installed script (where a hang must fail only the
    test that hangs)."""
    if not process:
        proc = run_main("lockout", *args, cwd=cwd, env={"QRSPI_GUARD_LEDGER": None},
                        timeout=timeout)
        return subprocess.CompletedProcess(proc.args, proc.returncode, proc.stdout.decode(),
                                           proc.stderr.decode())
    env = {k: v for k, v in os.environ.items() if k != "QRSPI_GUARD_LEDGER"}
    return subprocess.run([str(SCRIPT), "lockout", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


def one_error_line(p: subprocess.CompletedProcess[str]) -> str:
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert len(lines) == 1, p.stderr
    assert "internal error" not in p.stderr and "Traceback" not in p.stderr
    return lines[0]


def two_events(path: Path) -> bytes:
    led = Ledger(path)
    led.write(lambda s: plan_author(s, ART, "A"))
    led.write(lambda s: plan_reject(s, ART, "R", "reassign", "not good"))
    return path.read_bytes()


# -- #13: corrupt lines of any size or depth name their line ---------------------------

HOSTILE = {
    "json_nested_10000_deep": "[" * 10_000 + "]" * 10_000,
    "object_nested_10000_deep": '{"a":' * 10_000 + "1" + "}" * 10_000,
    "seq_of_5000_digits": GOOD_LINE.replace('"seq":1', '"seq":' + "1" * 5000),
    "seq_of_4000_digits": GOOD_LINE.replace('"seq":1', '"seq":' + "1" * 4000),
    "agent_a_5000_digit_int": GOOD_LINE.replace('"agent":"A"', '"agent":' + "7" * 5000),
    "event_a_4000_digit_int": GOOD_LINE.replace('"event":"authored"', '"event":' + "9" * 4000),
    "field_nested_500_deep": GOOD_LINE.replace('"agent":"A"', '"agent":' + "[" * 500 + "]" * 500),
    "seq_1e999": GOOD_LINE.replace('"seq":1', '"seq":1e999'),
    "at_before_year_1_in_utc": GOOD_LINE.replace("2026-01-01T00:00:00Z",
                                                 "0001-01-01T00:00:00+01:00"),
    "at_after_year_9999_in_utc": GOOD_LINE.replace("2026-01-01T00:00:00Z",
                                                   "9999-12-31T23:59:59-01:00"),
    "lone_surrogate": GOOD_LINE.replace('"agent":"A"', '"agent":"\\ud800"'),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_corrupt_ledger_line_of_any_size_or_depth_names_its_line(tmp_path: Path,
                                                                 name: str) -> None:
    path = tmp_path / "lockout.jsonl"
    good = two_events(path)
    corrupt = good + HOSTILE[name].replace('"seq":1,', '"seq":3,', 1).encode() + b"\n"
    path.write_bytes(corrupt)
    with pytest.raises(LedgerError, match=r"line 3: ") as info:
        Ledger(path).read()
    assert len(str(info.value)) < 400  # never a 5,000-digit number in the message
    with pytest.raises(LedgerError, match=r"line 3: "):
        Ledger(path).write(lambda s: plan_author(s, "other", "Z"))
    assert path.read_bytes() == corrupt


@pytest.mark.parametrize("name", ["json_nested_10000_deep", "seq_of_5000_digits"])
def test_corrupt_ledger_line_is_exit_2_with_the_line_not_internal_error(tmp_path: Path,
                                                                       name: str) -> None:
    (tmp_path / "l.jsonl").write_text(HOSTILE[name] + "\n")
    for args in (("status",), ("check", ART, "A"), ("author", ART, "A")):
        line = one_error_line(run(tmp_path, "--ledger", "l.jsonl", *args))
        assert "line 1: not valid JSON" in line
    assert (tmp_path / "l.jsonl").read_text() == HOSTILE[name] + "\n"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(
    st.binary(max_size=300),
    st.text(max_size=200).map(str.encode),
    st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
                 lambda kids: st.lists(kids, max_size=4)
                 | st.dictionaries(st.sampled_from(["seq", "at", "event", "artifact", "agent",
                                                    "agents", "reason", "x"]), kids,
                                   max_size=6),
                 max_leaves=20).map(lambda v: json.dumps(v).encode()),
))
def test_any_line_is_an_event_or_a_line_n_error_never_an_exception(raw: bytes) -> None:
    raw = raw.replace(b"\n", b" ")
    try:
        event = parse_line(raw, 1)
    except LedgerError as exc:
        assert str(exc).startswith("line 1: ")
    else:
        assert event.seq == 1


# -- #14: the ledger must be a regular file within the size cap ------------------------

@pytest.mark.parametrize("command", [("status",), ("check", ART, "A"), ("author", ART, "A")])
def test_ledger_fifo_is_exit_2_at_once_not_a_hang(tmp_path: Path,
                                                  command: tuple[str, ...]) -> None:
    os.mkfifo(tmp_path / "fifo")
    line = one_error_line(run(tmp_path, "--ledger", "fifo", *command, timeout=20, process=True))
    assert "a FIFO, not a regular file" in line


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/full", "/dev/null"])
@pytest.mark.parametrize("command", [("status",), ("author", ART, "A")])
def test_ledger_device_is_exit_2_at_once_and_never_read(tmp_path: Path, device: str,
                                                        command: tuple[str, ...]) -> None:
    if not os.path.exists(device):
        pytest.skip(f"{device} is not available here")
    line = one_error_line(run(tmp_path, "--ledger", device, *command, timeout=20))
    assert "a character device, not a regular file" in line


def test_ledger_directory_is_exit_2_one_line(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    assert "cannot" in one_error_line(run(tmp_path, "--ledger", "d", "status"))
    assert "cannot" in one_error_line(run(tmp_path, "--ledger", "d", "author", ART, "A"))


def test_ledger_over_the_size_cap_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "huge.jsonl"
    with open(path, "wb") as fh:  # sparse: no disk used, nothing to read in time
        fh.truncate(MAX_LEDGER_BYTES + 1)
    for command in (("status",), ("author", ART, "A")):
        line = one_error_line(run(tmp_path, "--ledger", "huge.jsonl", *command, timeout=20))
        assert "larger than 64 MiB" in line
    assert path.stat().st_size == MAX_LEDGER_BYTES + 1


def test_ledger_growing_past_the_cap_while_read_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "l.jsonl"
    two_events(path)
    monkeypatch.setattr(ledger_mod, "MAX_LEDGER_BYTES", 100)
    monkeypatch.setattr(ledger_mod, "_check_regular", lambda fd, p: None)  # size seen late
    with pytest.raises(LedgerError, match="larger than"):
        Ledger(path).read()


def test_ledger_symlink_to_a_regular_file_is_followed(tmp_path: Path) -> None:
    good = two_events(tmp_path / "real.jsonl")
    (tmp_path / "link.jsonl").symlink_to("real.jsonl")
    p = run(tmp_path, "--ledger", "link.jsonl", "status", "--format", "json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["events"] == 2
    assert (tmp_path / "real.jsonl").read_bytes() == good


# -- faults injected into the append: the old ledger or the new one --------------------

def _fail_with(code: int) -> Callable[..., None]:
    def fail(*args: object) -> None:
        raise OSError(code, os.strerror(code))
    return fail


def _partial_then_fail(code: int) -> Callable[[int, bytes], None]:
    def write_all(fd: int, data: bytes) -> None:
        os.write(fd, data[: len(data) // 2])  # half the line reaches the disk ...
        raise OSError(code, os.strerror(code))  # ... then the disk is full
    return write_all


FAULT_ERRNOS = [errno.ENOSPC, errno.EROFS, errno.EACCES, errno.EIO, errno.EINTR]


@pytest.mark.parametrize("code", FAULT_ERRNOS, ids=errno.errorcode.get)
@pytest.mark.parametrize("step", ["write", "partial_write", "fsync"])
def test_failed_append_leaves_the_old_ledger_byte_for_byte(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int, step: str) -> None:
    path = tmp_path / "lockout.jsonl"
    old = two_events(path)
    if step == "write":
        monkeypatch.setattr(ledger_mod, "_write_all", _fail_with(code))
    elif step == "partial_write":
        monkeypatch.setattr(ledger_mod, "_write_all", _partial_then_fail(code))
    else:
        monkeypatch.setattr(ledger_mod, "_fsync", _fail_with(code))
    with pytest.raises(LedgerError, match="cannot write ledger .*nothing was recorded"):
        Ledger(path).write(lambda s: plan_author(s, "other", "Z"))
    assert path.read_bytes() == old
    monkeypatch.undo()
    state, snap = Ledger(path).state()  # the next command sees the old ledger, whole
    assert state.last_seq == 2 and snap.torn is None


@pytest.mark.parametrize("code", FAULT_ERRNOS, ids=errno.errorcode.get)
def test_failed_append_after_cutting_a_torn_tail_leaves_the_complete_lines(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int) -> None:
    path = tmp_path / "lockout.jsonl"
    old = two_events(path)
    path.write_bytes(old + b'{"seq":3,"at":')
    monkeypatch.setattr(ledger_mod, "_write_all", _partial_then_fail(code))
    with pytest.raises(LedgerError, match="torn final line 3 was dropped"):
        Ledger(path).write(lambda s: plan_author(s, "other", "Z"))
    assert path.read_bytes() == old  # the torn bytes were never an event


def test_failed_cut_of_a_torn_tail_changes_nothing(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "lockout.jsonl"
    torn = two_events(path) + b'{"seq":3,"at":'
    path.write_bytes(torn)
    monkeypatch.setattr(ledger_mod, "_ftruncate", _fail_with(errno.EROFS))
    monkeypatch.setattr(ledger_mod, "_cut_back", lambda fd, size: False)  # read-only disk
    with pytest.raises(LedgerError, match="torn line, which the next write cuts off"):
        Ledger(path).write(lambda s: plan_author(s, "other", "Z"))
    assert path.read_bytes() == torn


def test_append_failure_is_exit_2_one_line_through_the_cli(tmp_path: Path) -> None:
    """A real disk-full: RLIMIT_FSIZE makes the append fail with EFBIG mid-way."""
    resource = pytest.importorskip("resource")
    path = tmp_path / "lockout.jsonl"
    old = two_events(path)
    limit = len(old) + 20  # room for a fragment of the next line only

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    env = {k: v for k, v in os.environ.items() if k != "QRSPI_GUARD_LEDGER"}
    p = subprocess.run([str(SCRIPT), "lockout", "--ledger", str(path), "author", "x", "A"],
                       env=env, capture_output=True, text=True, timeout=60,
                       preexec_fn=limited)
    line = one_error_line(p)
    assert "cannot write ledger" in line and "nothing was recorded" in line
    assert path.read_bytes() == old


# -- a kill at each step of the append -------------------------------------------------

KILLER = textwrap.dedent("""
    import os, sys
    from qrspi_guard.lockout import ledger as L
    from qrspi_guard.lockout.state import plan_approve
    path, step = sys.argv[1], sys.argv[2]
    real_write, real_fsync, real_truncate = L._write_all, L._fsync, L._ftruncate

    def die():
        os._exit(9)

    def ftruncate(fd, size):
        if step == "before_cut":
            die()
        real_truncate(fd, size)
        if step == "after_cut":
            die()

    def write_all(fd, data):
        if step == "mid_write":
            os.write(fd, data[: len(data) // 2])
            die()
        real_write(fd, data)
        if step == "before_fsync":
            die()

    def fsync(fd):
        real_fsync(fd)
        if step == "after_fsync":
            die()

    L._write_all, L._fsync, L._ftruncate = write_all, fsync, ftruncate
    L.Ledger(path).write(lambda s: plan_approve(s, "src/auth.ts", "R"))
    os._exit(0)
""")

KILL_STEPS = ["before_cut", "after_cut", "mid_write", "before_fsync", "after_fsync", "none"]


@pytest.mark.parametrize("step", KILL_STEPS)
def test_kill_at_any_step_of_an_append_leaves_old_or_new_and_the_next_run_tells_which(
        tmp_path: Path, step: str) -> None:
    path = tmp_path / "lockout.jsonl"
    complete = two_events(path)
    torn = b'{"seq":3,"at":"2026-'
    path.write_bytes(complete + torn)  # an earlier crash left a torn line to cut
    rc = subprocess.run([sys.executable, "-c", KILLER, str(path), step],
                        timeout=60).returncode
    assert rc == (0 if step == "none" else 9)
    data = path.read_bytes()
    lines = data.split(b"\n")
    status = run(tmp_path, "--ledger", str(path), "status", "--format", "json")
    assert status.returncode == 0, status.stderr
    doc = json.loads(status.stdout)
    if data.startswith(complete) and data.endswith(b"\n") and len(lines) == 4:
        # new: the approval is the third event, whole
        assert json.loads(lines[2])["event"] == "approved"
        assert doc["events"] == 3 and doc["torn_tail"] is None
        assert step in ("before_fsync", "after_fsync", "none")
    else:
        # old: the two complete events, and at most a torn line the next writer cuts
        assert data.startswith(complete) and b"\n" not in data[len(complete):]
        assert doc["events"] == 2
        assert (doc["torn_tail"] is None) == (data == complete)
        assert ("ignoring torn final line 3" in status.stderr) == (data != complete)
        assert step in ("before_cut", "after_cut", "mid_write")
        nxt = run(tmp_path, "--ledger", str(path), "approve", ART, "--reviewer", "R")
        assert nxt.returncode == 0, nxt.stderr
        assert ("dropped torn final line 3" in nxt.stderr) == (data != complete)
        assert path.read_bytes().startswith(complete)
        assert [json.loads(x)["seq"] for x in path.read_bytes().splitlines()] == [1, 2, 3]
