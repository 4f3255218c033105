"""watch under a failing disk and broken streams (issue 12, #3 and #17), in process.

The loop runs over a scripted event source and a fake clock, as in
test_watch_policy.py; faults are injected through the status writer the watcher is
given, and through real devices and FIFOs for the line sinks. A kill at each step of a
status write runs in a child process.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from qrspi_guard.contract.runconfig import Overrides
from qrspi_guard.output.status import write_atomic
from qrspi_guard.watch.events import EventKind, FsEvent, ScriptedSource
from qrspi_guard.watch.loop import MAX_WAIT, Options, Stopped, Watcher
from qrspi_guard.watch.policy import Probe
from qrspi_guard.watch.publish import (
    FAULT_SCHEMA,
    STALE_TEMP_AGE,
    LineSink,
    read_previous,
    sweep_stale_temps,
)

FINDING = """---
finding_id: R1-F01
severity: medium
change_type: {ct}
referenced_files: [src/a.py:L10-L20]
artifact: design
round: 1
reviewer: quality-claude
---

Something specific is wrong here and this sentence says what would fix it.
"""


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


class FlakyWriter:
    """write_atomic, failing with *errno* while :attr:`failing` is set."""

    def __init__(self) -> None:
        self.failing: int | None = None
        self.attempts = 0

    def __call__(self, path: str, data: bytes) -> None:
        self.attempts += 1
        if self.failing is not None:
            raise OSError(self.failing, os.strerror(self.failing))
        write_atomic(path, data)


class Harness:
    def __init__(self, tmp_path: Path, events_file: Path | None = None) -> None:
        art = tmp_path / "run"
        self.rd = art / "reviews" / "design" / "round-01"
        self.rd.mkdir(parents=True)
        (art / "config.md").write_text("---\nsecond_reviewer: false\n"
                                       "verifier_enabled: false\n---\n")
        self.status_path = self.rd.parent / "round-01-guard.json"
        self.clock = Clock()
        self.out: list[str] = []
        self.err: list[str] = []
        self.writer = FlakyWriter()
        self.source = ScriptedSource()
        self.w = Watcher(str(tmp_path), Overrides(), self.source,
                         Options(settle=30.0, rescan=30.0, fmt="json",
                                 events_file=str(events_file) if events_file else None),
                         out=self.out.append, err=self.err.append, clock=self.clock,
                         wall=lambda: 0.0, probe=lambda p: Probe.NO_WRITER,
                         peek=lambda p: True, write=self.writer)
        if self.w.events is not None:
            self.w.events.open()
        self.w.discover()
        self.w.tick()

    def write_finding(self, ct: str) -> None:
        path = self.rd / "quality-claude.finding-F01.md"
        path.write_text(FINDING.format(ct=ct))
        self.events(FsEvent(EventKind.CLOSED, str(path)))

    def events(self, *events: FsEvent) -> None:
        self.w.apply(list(events))
        self.w.tick()

    def advance(self, seconds: float) -> None:
        self.clock.t += seconds
        self.w.tick()

    def on_disk(self) -> str | None:
        doc = read_previous(str(self.status_path))
        return doc["status"] if doc else None

    def shown(self) -> list[str]:
        return [json.loads(line)["status"] for line in self.out]

    def complaints(self) -> list[str]:
        return [line for line in self.err if "cannot write" in line]


FAULTS = [errno.ENOSPC, errno.EROFS, errno.EACCES, errno.EINTR, errno.EIO]


# -- #3: a status file that cannot be written is retried until it says the truth -------

@pytest.mark.parametrize("code", FAULTS, ids=errno.errorcode.get)
def test_failed_status_write_is_retried_at_every_tick_until_the_file_shows_the_halt(
        tmp_path: Path, code: int) -> None:
    h = Harness(tmp_path, events_file=tmp_path / "events.jsonl")
    assert h.on_disk() == "pending"
    h.writer.failing = code
    h.write_finding("corectness")
    assert h.on_disk() == "pending"  # the old file, whole: not yet the halt ...
    assert h.shown() == ["pending", "halt"]  # ... but stdout shows the halt at once
    [complaint] = h.complaints()
    assert os.strerror(code) in complaint and "still says pending while the round is halt" \
        in complaint
    attempts = h.writer.attempts
    for _ in range(5):  # every tick retries; nothing more is said
        h.advance(1.0)
    assert h.writer.attempts == attempts + 5
    h.events(FsEvent(EventKind.LOSS, "", "overflow"))  # so does every rescan
    assert h.writer.attempts >= attempts + 6
    assert len(h.complaints()) == 1 and h.on_disk() == "pending"
    h.writer.failing = None
    h.advance(1.0)
    assert h.on_disk() == "halt"
    assert any("is current again (status halt)" in line for line in h.err)
    assert not h.w.publisher.has_unwritten()
    h.advance(1.0)
    assert h.shown() == ["pending", "halt"]  # the status line was never repeated
    faults = [json.loads(x) for x in (tmp_path / "events.jsonl").read_text().splitlines()]
    faults = [f for f in faults if f.get("schema") == FAULT_SCHEMA]
    assert [(f["fault"], f["status"]) for f in faults] == [
        ("status_write_failed", "halt"), ("status_write_recovered", "halt")]
    assert faults[0]["error"] == os.strerror(code) and faults[0]["on_disk"] == "pending"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only directory")
def test_read_only_step_directory_as_a_non_root_user_is_retried_until_writable(
        tmp_path: Path) -> None:
    """The real fault, where chmod can make one: the step directory turns read-only."""
    h = Harness(tmp_path)
    h.w.publisher.write = write_atomic
    step = h.rd.parent
    step.chmod(0o555)
    try:
        h.write_finding("corectness")
        assert h.on_disk() == "pending" and h.shown()[-1] == "halt"
        assert len(h.complaints()) == 1
        h.advance(1.0)
        assert len(h.complaints()) == 1
    finally:
        step.chmod(0o755)
    h.advance(1.0)
    assert h.on_disk() == "halt"


def test_the_loop_wakes_up_to_retry_without_any_event(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    assert h.w._timeout() is None or h.w._timeout() > 1.0  # idle: no retry pending
    h.writer.failing = errno.ENOSPC
    h.write_finding("corectness")
    assert h.w._timeout() is not None and h.w._timeout() <= h.w.opt.retry


def test_status_file_that_never_existed_is_written_once_the_disk_allows(tmp_path: Path) -> None:
    art = tmp_path / "run" / "reviews" / "design" / "round-01"
    art.mkdir(parents=True)
    (art / "quality-claude.finding-F01.md").write_text(FINDING.format(ct="corectness"))
    writer = FlakyWriter()
    writer.failing = errno.EROFS
    err: list[str] = []
    out: list[str] = []
    w = Watcher(str(tmp_path), Overrides(second_reviewer=False), ScriptedSource(),
                Options(settle=30.0), out=out.append, err=err.append, clock=Clock(),
                wall=lambda: 0.0, probe=lambda p: Probe.NO_WRITER, peek=lambda p: True,
                write=writer)
    w.discover()
    w.tick()
    assert "HALT" in out[0]
    assert any("it does not exist yet while the round is halt" in e for e in err)
    writer.failing = None
    w.tick()
    assert read_previous(str(art.parent / "round-01-guard.json"))["status"] == "halt"


def test_round_fixed_while_its_status_file_was_unwritable_has_nothing_left_to_retry(
        tmp_path: Path) -> None:
    h = Harness(tmp_path)
    h.writer.failing = errno.ENOSPC
    h.write_finding("corectness")
    assert h.w.publisher.has_unwritten()
    finding = h.rd / "quality-claude.finding-F01.md"
    finding.unlink()  # withdrawn: the disk's "pending" is the truth again
    h.events(FsEvent(EventKind.DELETED, str(finding)))
    assert not h.w.publisher.has_unwritten()
    assert h.on_disk() == "pending" and h.shown() == ["pending", "halt", "pending"]


def test_a_round_that_goes_away_is_no_longer_retried(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    h.writer.failing = errno.ENOSPC
    h.write_finding("corectness")
    shutil.rmtree(h.rd)
    h.events(FsEvent(EventKind.DIR_DELETED, str(h.rd)))
    assert not h.w.publisher.has_unwritten()


def test_the_longest_wait_is_bounded_whatever_the_options(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    h.w.policy.settle = 1e9
    h.w.policy.rescan_every = 1e9
    h.w.policy._next_rescan = h.clock() + 1e9
    assert h.w._timeout() == MAX_WAIT  # never past threading.TIMEOUT_MAX


# -- #17: line sinks that fail are said once; watch goes on ----------------------------

def test_events_to_dev_full_is_said_once_and_the_status_files_still_follow(
        tmp_path: Path) -> None:
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    h = Harness(tmp_path, events_file=Path("/dev/full"))
    h.write_finding("corectness")
    h.write_finding("clarity")
    assert h.shown() == ["pending", "halt", "pending"]
    assert h.on_disk() == "pending"
    events_errors = [e for e in h.err if "events file /dev/full" in e]
    assert len(events_errors) == 1 and "No space left on device" in events_errors[0]
    h.w.events.close()  # closing never raises


def test_line_sink_says_a_failure_once_and_its_recovery_once(tmp_path: Path) -> None:
    err: list[str] = []
    target = tmp_path / "out.txt"
    fd = os.open(target, os.O_WRONLY | os.O_CREAT)
    sink = LineSink("standard output", err.append, fd=fd)
    assert sink.write("one")
    os.close(fd)  # now every write fails with EBADF
    assert not sink.write("two") and not sink.write("three")
    assert len(err) == 1 and "cannot write to standard output" in err[0]
    sink.fd = os.open(target, os.O_WRONLY | os.O_APPEND)
    assert sink.write("four")
    assert err[1].endswith("writing again (2 lines lost)")
    assert target.read_text() == "one\nfour\n"
    sink.close()


@pytest.mark.parametrize("code", FAULTS, ids=errno.errorcode.get)
@pytest.mark.parametrize("partial", [False, True], ids=["nothing_written", "half_written"])
def test_events_file_write_that_fails_leaves_whole_lines_only(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int, partial: bool) -> None:
    """ENOSPC, EROFS, EACCES, EINTR, EIO on an events line, after none or half of it
    reached the file: the file is cut back to its old bytes, the failure said once, and
    the next line, once writes work, is whole on a line of its own."""
    events = tmp_path / "events.jsonl"
    err: list[str] = []
    sink = LineSink("events file", err.append, path=str(events))
    sink.open()
    assert sink.write('{"n":1}')
    real_write = os.write
    state = {"mode": "fail"}  # "fail": the next call fails (after 3 bytes if partial)

    def write(fd: int, data: Any) -> int:
        if fd != sink.fd or state["mode"] == "ok":
            return real_write(fd, data)
        if partial and state["mode"] == "fail":
            state["mode"] = "then_fail"
            return real_write(fd, bytes(data[:3]))
        state["mode"] = "fail"
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, "write", write)
    assert not sink.write('{"n":2}')
    assert not sink.write('{"n":3}')
    assert events.read_bytes() == b'{"n":1}\n'  # the old file, byte for byte
    assert len(err) == 1 and os.strerror(code) in err[0]
    state["mode"] = "ok"
    assert sink.write('{"n":4}')
    monkeypatch.undo()
    sink.close()
    assert [json.loads(x) for x in events.read_text().splitlines()] == [{"n": 1}, {"n": 4}]
    assert "writing again (2 lines lost)" in err[-1]


def test_events_fifo_without_a_reader_never_blocks_and_delivers_once_one_comes(
        tmp_path: Path) -> None:
    fifo = tmp_path / "events.fifo"
    os.mkfifo(fifo)
    err: list[str] = []
    sink = LineSink("events file", err.append, path=str(fifo))
    sink.open()  # no reader: ENXIO, said once, not an error
    assert not sink.write("lost")
    assert len(err) == 1 and "no reader yet" in err[0]
    got: list[bytes] = []
    reader_fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        assert sink.write('{"n":1}')
        got.append(os.read(reader_fd, 4096))
    finally:
        os.close(reader_fd)
    assert got == [b'{"n":1}\n']
    assert "writing again (1 line lost)" in err[-1]
    assert not sink.write("reader gone")  # EPIPE: reopened at the next line
    sink.close()


def test_events_fifo_whose_reader_stops_reading_costs_a_bounded_wait_and_one_torn_line(
        tmp_path: Path) -> None:
    fifo = tmp_path / "events.fifo"
    os.mkfifo(fifo)
    reader_fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    err: list[str] = []
    sink = LineSink("events file", err.append, path=str(fifo), timeout=0.05)
    sink.open()
    try:
        big = "x" * (1 << 20)  # far more than a pipe holds
        assert not sink.write(big)  # returns after the timeout instead of blocking
        assert sink.torn and "took nothing" in err[0]
        drained = b""
        while True:
            try:
                chunk = os.read(reader_fd, 1 << 16)
            except BlockingIOError:
                break
            if not chunk:
                break
            drained += chunk
        assert sink.write("next")
        tail = os.read(reader_fd, 1 << 16)
        assert tail == b"\nnext\n"  # the torn line is ended before the next one
        assert drained and set(drained) == {ord("x")}
    finally:
        sink.close()
        os.close(reader_fd)


def test_blocking_stdout_pipe_nobody_reads_costs_a_bounded_wait_not_a_hang() -> None:
    """stdout is a blocking descriptor shared with the parent: it is never switched to
    non-blocking, yet a full pipe holds a line up for at most the sink's timeout."""
    r, w = os.pipe()
    err: list[str] = []
    sink = LineSink("standard output", err.append, fd=w, timeout=0.2)
    try:
        start = time.monotonic()
        assert not sink.write("y" * (1 << 20))
        assert time.monotonic() - start < 10  # bounded (0.2 s plus scheduling)
        assert os.get_blocking(w)
        assert len(err) == 1 and "took nothing" in err[0]
    finally:
        os.close(r)
        os.close(w)


def test_events_file_left_torn_by_a_killed_run_is_said_and_continued_on_a_new_line(
        tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    events.write_bytes(b'{"schema":"qrspi-guard/round-status/1"}\n{"schema":"qrsp')
    h = Harness(tmp_path, events_file=events)
    assert any("ends in a torn line" in e for e in h.err)
    lines = events.read_bytes().split(b"\n")
    assert lines[1] == b'{"schema":"qrsp'
    assert json.loads(lines[2])["status"] == "pending"  # whole, on its own line


# -- a kill at each step of a status write ---------------------------------------------

KILLER = textwrap.dedent("""
    import os, sys
    from qrspi_guard.output import files, status
    path, step = sys.argv[1], sys.argv[2]
    real_fsync, real_replace, real_create = os.fsync, os.replace, files._create_temp

    def die():
        os._exit(9)

    def create(d, shown):  # the temp file, made relative to the step's descriptor
        name = real_create(d, shown)
        if step == "after_mkstemp":
            die()
        if step == "mid_write":
            fd = d.open(name, os.O_WRONLY)
            os.write(fd, b'{"schema": "qrspi-guard/round-status/1", "sta')
            die()
        return name

    def fsync(fd):
        if step == "before_fsync":
            die()
        real_fsync(fd)

    def replace(a, b, **kw):
        if step == "before_rename":
            die()
        real_replace(a, b, **kw)
        if step == "after_rename":
            die()

    files._create_temp, os.fsync, os.replace = create, fsync, replace
    status.write_atomic(path, b'{"schema": "qrspi-guard/round-status/1", "status": "halt"}\\n')
    os._exit(0)
""")

KILL_STEPS = ["after_mkstemp", "mid_write", "before_fsync", "before_rename", "after_rename"]


@pytest.mark.parametrize("step", KILL_STEPS)
def test_kill_at_any_step_of_a_status_write_leaves_old_or_new_and_the_next_run_tells(
        tmp_path: Path, step: str) -> None:
    h = Harness(tmp_path)
    old = h.status_path.read_bytes()
    assert json.loads(old)["status"] == "pending"
    rc = subprocess.run([sys.executable, "-c", KILLER, str(h.status_path), step],
                        timeout=60).returncode
    assert rc == 9
    now = json.loads(h.status_path.read_bytes())  # always whole JSON
    assert now["status"] == ("halt" if step == "after_rename" else "pending")
    if step != "after_rename":
        assert h.status_path.read_bytes() == old
    temps = list(h.rd.parent.glob(".guard-*.tmp"))
    assert (len(temps) == 1) == (step != "after_rename")
    for t in temps:  # the next start finds them old and removes them
        os.utime(t, (0, 0))
    out: list[str] = []
    err: list[str] = []
    w = Watcher(str(tmp_path), Overrides(), ScriptedSource(), Options(settle=30.0, fmt="json"),
                out=out.append, err=err.append, clock=Clock(), wall=lambda: STALE_TEMP_AGE,
                probe=lambda p: Probe.NO_WRITER, peek=lambda p: True)
    w.discover()
    w.tick()
    assert json.loads(out[0])["status"] == "pending"  # the next run tells the truth ...
    assert json.loads(h.status_path.read_bytes())["status"] == "pending"  # ... on disk too
    assert w.status_writes == (1 if step == "after_rename" else 0)
    assert not list(h.rd.parent.glob(".guard-*.tmp"))
    assert sum("a temp file left by an interrupted status write" in e for e in err) == \
        len(temps)


def test_fresh_temp_files_of_a_live_writer_are_never_swept(tmp_path: Path) -> None:
    (tmp_path / ".guard-abc.tmp").write_text("{")
    (tmp_path / ".guard-old.tmp").write_text("{")
    os.utime(tmp_path / ".guard-old.tmp", (0, 0))
    (tmp_path / "other.tmp").write_text("x")
    os.utime(tmp_path / "other.tmp", (0, 0))
    assert sweep_stale_temps(str(tmp_path), time.time()) == [".guard-old.tmp"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [".guard-abc.tmp", "other.tmp"]


def test_previous_status_that_is_a_fifo_or_huge_or_garbage_is_no_previous_status(
        tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo.json")
    result: list[Any] = []
    t = threading.Thread(target=lambda: result.append(read_previous(str(tmp_path /
                                                                       "fifo.json"))))
    t.start()
    t.join(10)
    assert not t.is_alive() and result == [None]
    (tmp_path / "deep.json").write_text("[" * 100_000)
    assert read_previous(str(tmp_path / "deep.json")) is None
    with open(tmp_path / "huge.json", "wb") as fh:
        fh.truncate((1 << 20) + 10)
    assert read_previous(str(tmp_path / "huge.json")) is None
    (tmp_path / "list.json").write_text("[1]")
    assert read_previous(str(tmp_path / "list.json")) is None


# -- stop signals and writes -----------------------------------------------------------

def test_stop_signal_during_a_status_write_lets_it_finish_then_unwinds(tmp_path: Path) -> None:
    h = Harness(tmp_path)

    def signalled_mid_write(path: str, data: bytes) -> None:
        h.w.on_signal()  # SIGTERM arrives inside the write: it must not cut it
        write_atomic(path, data)

    h.w.publisher.write = signalled_mid_write
    with pytest.raises(Stopped):
        h.write_finding("corectness")
    assert h.on_disk() == "halt"  # the new file, whole
    assert not list(h.rd.parent.glob(".guard-*"))


def test_stop_signal_outside_writes_unwinds_at_once_and_only_the_first_one(
        tmp_path: Path) -> None:
    h = Harness(tmp_path)
    with pytest.raises(Stopped):
        h.w.on_signal()
    h.w.on_signal()  # a second signal while unwinding is only noted


def test_stop_signal_while_waiting_for_events_is_exit_0(tmp_path: Path) -> None:
    class SignalOnGet(ScriptedSource):
        def get(self, timeout: float | None) -> list[FsEvent]:
            w.on_signal()  # as if SIGTERM arrived while the loop waited
            return []

    err: list[str] = []
    w = Watcher(str(tmp_path), Overrides(second_reviewer=False), SignalOnGet(),
                Options(settle=30.0), out=lambda s: None, err=err.append, clock=Clock(),
                wall=lambda: 0.0, probe=lambda p: Probe.NO_WRITER, peek=lambda p: True)
    assert w.run() == 0
    assert "stopped" in err[-1]


def test_two_watchers_over_one_tree_agree_and_never_leave_half_a_file(tmp_path: Path) -> None:
    a = Harness(tmp_path)
    b_out: list[str] = []
    b = Watcher(str(tmp_path), Overrides(), ScriptedSource(), Options(settle=30.0, fmt="json"),
                out=b_out.append, err=lambda s: None, clock=Clock(), wall=lambda: 0.0,
                probe=lambda p: Probe.NO_WRITER, peek=lambda p: True)
    b.discover()
    b.tick()
    assert b.status_writes == 0  # a's file already says what b found
    finding = a.rd / "quality-claude.finding-F01.md"
    finding.write_text(FINDING.format(ct="corectness"))
    for w in (a.w, b):  # both see the same close event, in either order
        w.apply([FsEvent(EventKind.CLOSED, str(finding))])
        w.tick()
        assert a.on_disk() == "halt"  # always whole JSON: one of them, never a mix
    assert json.loads(b_out[-1])["status"] == json.loads(a.out[-1])["status"] == "halt"
    assert not list(a.rd.parent.glob(".guard-*"))
