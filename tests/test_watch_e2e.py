"""watch end to end: the installed console script in a subprocess, a real observer and
real files in temp dirs.

Every wait is on one of the guard's own signals (its stderr and stdout lines, its
``--events`` lines, its status files), with a generous deadline that only a broken
guard reaches; no test depends on how fast the machine is. Where a test needs the
guard to have let time pass, it watches a guard-side clock: an empty round that
becomes ``halt`` once ``--settle`` seconds of guard time have gone by."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

SCRIPT = str(Path(sys.executable).parent / "qrspi-guard")
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "rounds"
DEADLINE = 30.0  #: reached only when the guard is broken; never a timing assumption

FINDING = """---
finding_id: R{r}-F{n:02d}
severity: medium
change_type: {ct}
referenced_files: [src/a.py:L10-L20]
artifact: design
round: {r}
reviewer: {tag}
---

Something specific is wrong here and this sentence says what would fix it.
"""


def finding(n: int = 1, tag: str = "quality-claude", ct: str = "clarity", r: int = 1) -> str:
    return FINDING.format(n=n, tag=tag, ct=ct, r=r)


def wait_for(cond: Callable[[], Any], what: str, deadline: float = DEADLINE) -> Any:
    end = time.monotonic() + deadline
    while True:
        value = cond()
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


def read_status(round_dir: Path) -> dict | None:
    n = int(round_dir.name.split("-")[1])
    try:
        return json.loads((round_dir.parent / f"round-{n:02d}-guard.json").read_text())
    except (OSError, ValueError):
        return None


def causes(round_dir: Path) -> set[str]:
    doc = read_status(round_dir)
    return {h["cause"] for h in doc["halts"]} if doc else set()


def status_is(round_dir: Path, status: str) -> Callable[[], bool]:
    return lambda: (read_status(round_dir) or {}).get("status") == status


class Watch:
    """The console script running `watch` in the background."""

    def __init__(self, root: Path, *args: str) -> None:
        self.events = root.parent / f"{root.name}-events.jsonl"
        cmd = [SCRIPT, "watch", str(root), "--format", "json", "--events", str(self.events),
               *args]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True)
        self.out: list[str] = []
        self.err: list[str] = []
        self._threads = [threading.Thread(target=self._pump, args=(s, d), daemon=True)
                         for s, d in ((self.proc.stdout, self.out), (self.proc.stderr, self.err))]
        for t in self._threads:
            t.start()

    @staticmethod
    def _pump(stream: Any, into: list[str]) -> None:
        for line in stream:
            into.append(line.rstrip("\n"))

    def ready(self) -> Watch:
        wait_for(lambda: any("watching" in line for line in self.err) or
                 self.proc.poll() is not None, "the watcher to be ready")
        assert self.proc.poll() is None, self.err
        return self

    def stop(self, sig: int = signal.SIGTERM) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            rc = self.proc.wait(timeout=DEADLINE)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise
        for t in self._threads:
            t.join(timeout=DEADLINE)
        return rc

    def event_lines(self) -> list[dict]:
        try:
            return [json.loads(x) for x in self.events.read_text().splitlines()]
        except OSError:
            return []


@pytest.fixture
def watchers() -> Any:
    started: list[Watch] = []

    def start(root: Path, *args: str) -> Watch:
        w = Watch(root, *args)
        started.append(w)
        return w.ready()

    yield start
    for w in started:
        if w.proc.poll() is None:
            w.proc.kill()
            w.proc.wait()


def make_run(tmp_path: Path, second: bool = False) -> Path:
    art = tmp_path / "run"
    (art / "reviews" / "design" / "round-01").mkdir(parents=True)
    (art / "config.md").write_text(f"---\nsecond_reviewer: {str(second).lower()}\n"
                                   "verifier_enabled: false\n---\n")
    return art / "reviews" / "design" / "round-01"


def test_start_up_scan_writes_every_round_as_check_would(tmp_path: Path, watchers: Any) -> None:
    root = tmp_path / "example"
    shutil.copytree(FIXTURES / "example", root)  # copy2 keeps mtimes: old, complete rounds
    w = watchers(root)
    reviews = next(root.rglob("reviews"))
    rounds = sorted(p for p in reviews.glob("*/round-*")
                    if p.is_dir() and p.parent.name != "telemetry")
    assert len(rounds) == 4
    wait_for(lambda: all(read_status(r) for r in rounds), "status files for every round")
    expected = tmp_path / "expected"
    shutil.copytree(FIXTURES / "example", expected)
    subprocess.run([SCRIPT, "check", str(expected), "--write-status"], capture_output=True)
    for rd in rounds:
        mine = read_status(rd)
        theirs = read_status(expected / rd.relative_to(root))
        assert mine and theirs
        for doc in (mine, theirs):
            doc.pop("checked_at")
        assert mine == theirs, rd
    assert w.stop() == 0  # then every line it printed has been read
    lines = [json.loads(x) for x in w.out]
    assert len(lines) == len(rounds) and all(x["previous"] is None for x in lines)


def test_bad_file_halts_and_the_fix_clears_it(tmp_path: Path, watchers: Any) -> None:
    rd = make_run(tmp_path)
    w = watchers(tmp_path, "--settle", "30")
    wait_for(status_is(rd, "pending"), "pending at start")
    path = rd / "quality-claude.finding-F01.md"
    path.write_text(finding(ct="corectness"))
    wait_for(lambda: "change_type_out_of_enum" in causes(rd), "the halt")
    path.write_text(finding())
    wait_for(status_is(rd, "pending"), "the halt to clear")
    assert read_status(rd)["reported_tags"] == ["quality-claude"]
    assert w.stop() == 0  # the status file comes first, its lines just after: stop, then read
    statuses = [x["status"] for x in w.event_lines()]
    assert statuses == ["pending", "halt", "pending"]


def round_events(w: Watch, round_dir: Path) -> list[dict]:
    return [e for e in w.event_lines()
            if e.get("round_dir") and Path(e["round_dir"]) == round_dir]


def settle_clock(w: Watch, step_dir: Path, n: int) -> None:
    """Create an empty round and wait until the guard finds it complete: proof that
    --settle seconds of the guard's own time passed after everything written before."""
    tick = step_dir / f"round-{n:02d}"
    tick.mkdir(parents=True)
    wait_for(lambda: any(e["status"] == "halt" for e in round_events(w, tick)),
             f"the guard's settle clock {tick.name}")


def test_writer_holding_its_file_open_between_pieces_is_never_judged(
        tmp_path: Path, watchers: Any) -> None:
    """The read-lease probe (cli.md, watch): a reviewer that still has the file open is
    never judged, however long it pauses between pieces, and however long the round is
    quiet meanwhile; the guard judges it once it is closed."""
    rd = make_run(tmp_path)
    text = finding()
    pieces = [text[i:i + 40] for i in range(0, len(text), 40)]
    clock = rd.parent.parent / "research"
    with open(rd / "quality-claude.finding-F01.md", "w") as fh:
        fh.write(pieces[0])  # half a frontmatter, held open, before the guard starts:
        fh.flush()           # its start-up scan sees it with no close event to come
        w = watchers(tmp_path, "--settle", "0.6")
        first = wait_for(lambda: round_events(w, rd), "the round's first status")[0]
        assert first["status"] == "pending"  # probed at start-up and not judged ...
        assert "quality-claude" in first["awaiting"]  # ... so still awaited
        for k, piece in enumerate(pieces[1:4], start=1):
            fh.write(piece)
            fh.flush()
            settle_clock(w, clock, k)  # a pause longer than --settle, in guard time
        (rd / "scope-claude.clean.md").write_text("---\nreviewer: scope-claude\nround: 1\n"
                                                  "findings: 0\n---\n")
        wait_for(lambda: "scope-claude" in (read_status(rd) or {}).get("reported_tags", []),
                 "the other reviewer's file to be judged")
        settle_clock(w, clock, 4)
        assert (read_status(rd) or {}).get("status") == "pending"  # still not complete
        for piece in pieces[4:]:
            fh.write(piece)
    wait_for(status_is(rd, "ok"), "ok once the writer closed")
    assert w.stop() == 0
    assert "halt" not in [e["status"] for e in round_events(w, rd)]


def test_atomic_rename_into_place_is_judged_as_the_new_file(tmp_path: Path,
                                                           watchers: Any) -> None:
    rd = make_run(tmp_path)
    watchers(tmp_path / "run", "--settle", "30")
    wait_for(status_is(rd, "pending"), "pending at start")
    tmp = rd / ".quality-claude.finding-F01.md.tmp"
    tmp.write_text(finding(ct="corectness"))
    os.rename(tmp, rd / "quality-claude.finding-F01.md")
    wait_for(lambda: "change_type_out_of_enum" in causes(rd), "the halt from the rename")
    outside = tmp_path / "outside.md"  # from outside the watched tree: no close event
    outside.write_text(finding(tag="scope-claude", ct="scopee"))
    os.rename(outside, rd / "scope-claude.finding-F01.md")
    wait_for(lambda: len(read_status(rd)["halts"]) == 2, "the second halt")
    assert read_status(rd)["reported_tags"] == ["quality-claude", "scope-claude"]


def test_new_round_dir_filled_at_once_is_judged_and_completes_the_last(
        tmp_path: Path, watchers: Any) -> None:
    rd = make_run(tmp_path)
    watchers(tmp_path, "--settle", "30")
    wait_for(status_is(rd, "pending"), "pending at start")
    step = rd.parent / "round-02"
    step.mkdir()
    (step / "quality-claude.finding-F01.md").write_text(finding(r=2, ct="corectness"))
    (step / "scope-claude.clean.md").write_text("---\nreviewer: scope-claude\nround: 2\n"
                                                "findings: 0\n---\n")
    (step / "notes.txt").write_text("raw stdout\n")
    # each file is judged as it settles: wait for all three, not the first two halts
    wait_for(lambda: causes(step) == {"change_type_out_of_enum", "unknown_file_in_round_dir"}
             and (read_status(step) or {}).get("reported_tags")
             == ["quality-claude", "scope-claude"], "round-02's halts and both reviewers")
    # round-02 appeared: round-01 is complete, and nobody reviewed it
    wait_for(lambda: "expected_tag_no_output" in causes(rd), "round-01 complete")
    newstep = rd.parent.parent / "research" / "round-01"
    newstep.mkdir(parents=True)
    (newstep / "quality-claude.finding-F01.md").write_text(finding().replace(
        "artifact: design", "artifact: research"))
    wait_for(lambda: (read_status(newstep) or {}).get("reported_tags") == ["quality-claude"],
             "a new step's round")


def test_deleting_a_file_re_evaluates_its_round(tmp_path: Path, watchers: Any) -> None:
    rd = make_run(tmp_path)
    (rd / "quality-claude.finding-F01.md").write_text(finding(ct="corectness"))
    (rd / "quality-claude.finding-F02.md").write_text(finding(n=2))
    watchers(tmp_path, "--settle", "30")
    wait_for(lambda: "change_type_out_of_enum" in causes(rd), "the halt at start")
    (rd / "quality-claude.finding-F01.md").unlink()
    wait_for(lambda: read_status(rd)["halts"] == [], "the halt to clear")
    (rd / "quality-claude.finding-F02.md").unlink()
    wait_for(lambda: read_status(rd)["reported_tags"] == [], "the tag to go")


def test_burst_of_1000_files_is_judged_once_per_file(tmp_path: Path, watchers: Any) -> None:
    """Each version of a file is parsed once, and the status file is rewritten far less
    often than once per file. The last file's halt can be on disk before every earlier
    file is judged (a file probed while still open waits for its close event, and the
    guard may judge the last one from a directory listing first), so the test waits on
    an event that comes after all the writes in the guard's own queue: a new round's
    directory. With periodic rescans off, the guard reaches it only in order."""
    rd = make_run(tmp_path)
    w = watchers(tmp_path, "--settle", "30", "--rescan", "0")
    wait_for(status_is(rd, "pending"), "pending at start")
    body = finding()
    for i in range(1, 1001):
        ct = "corectness" if i == 1000 else "clarity"
        text = body.replace("F01", f"F{i:04d}").replace("clarity", ct)
        (rd / f"quality-claude.finding-F{i:04d}.md").write_text(text)
    wait_for(lambda: "change_type_out_of_enum" in causes(rd), "the last file's halt")
    marker = rd.parent.parent / "research" / "round-01"
    marker.mkdir(parents=True)
    wait_for(lambda: round_events(w, marker), "the guard to reach the marker round")
    assert len(read_status(rd)["halts"]) == 1
    assert w.stop() == 0
    summary = next(line for line in w.err if "stopped" in line)
    judged = int(summary.split("(")[1].split(" ")[0])
    writes = int(summary.split(", ")[-1].split(" ")[0])
    assert judged == 1000
    assert writes <= 100  # vs. 1,000 files and 3,000 events


def test_settle_turns_a_silent_reviewer_into_expected_tag_no_output(tmp_path: Path,
                                                                    watchers: Any) -> None:
    """round-contract §5: --settle seconds without a change complete the round, and
    the matrix then names the reviewer who never wrote. The finding is held open until
    the guard is up, so the round cannot complete before it is judged, however slow the
    start."""
    rd = make_run(tmp_path)
    with open(rd / "quality-claude.finding-F01.md", "w") as fh:
        fh.write(finding())
        fh.flush()
        w = watchers(tmp_path, "--settle", "0.5")
        wait_for(lambda: round_events(w, rd), "the round's first status")
    wait_for(status_is(rd, "halt"), "the round to settle")
    halts = read_status(rd)["halts"]
    assert [(h["cause"], h.get("tag")) for h in halts] == [("expected_tag_no_output",
                                                            "scope-claude")]
    assert halts[0]["message"] == "Reviewer scope-claude wrote no per-finding files"
    assert w.stop() == 0
    assert [e["status"] for e in round_events(w, rd)] == ["pending", "halt"]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_stops_cleanly_with_exit_0_and_whole_status_files(tmp_path: Path,
                                                                 watchers: Any, sig: int) -> None:
    rd = make_run(tmp_path)
    w = watchers(tmp_path, "--settle", "30")
    for i in range(1, 200):
        (rd / f"quality-claude.finding-F{i:03d}.md").write_text(finding(ct="corectness"))
    assert w.stop(sig) == 0
    assert not any("Traceback" in line for line in w.err)
    assert read_status(rd) is not None  # whole JSON
    assert not list(rd.parent.glob(".guard-*"))


def test_restart_rebuilds_from_disk_after_changes_made_while_stopped(
        tmp_path: Path, watchers: Any) -> None:
    rd = make_run(tmp_path)
    (rd / "quality-claude.finding-F01.md").write_text(finding(ct="corectness"))
    w = watchers(tmp_path, "--settle", "30")
    wait_for(lambda: "change_type_out_of_enum" in causes(rd), "the halt")
    assert w.stop() == 0
    (rd / "quality-claude.finding-F01.md").write_text(finding())
    (rd / "scope-claude.finding-F01.md").write_text(finding(tag="scope-claude", ct="x"))
    w2 = watchers(tmp_path, "--settle", "30")
    wait_for(lambda: causes(rd) == {"change_type_out_of_enum"} and
             read_status(rd)["halts"][0]["file"] == "scope-claude.finding-F01.md",
             "the new state")
    assert w2.stop() == 0
    w3 = watchers(tmp_path, "--settle", "30")  # nothing changed: nothing rewritten
    assert w3.stop() == 0
    assert "0 status writes" in w3.err[-1]


def test_root_missing_is_exit_2(tmp_path: Path) -> None:
    r = subprocess.run([SCRIPT, "watch", str(tmp_path / "nope")], capture_output=True,
                       text=True, timeout=DEADLINE)
    assert r.returncode == 2
    assert "not found" in r.stderr and "Traceback" not in r.stderr


def test_root_deleted_while_running_is_reported(tmp_path: Path, watchers: Any) -> None:
    root = tmp_path / "root"
    rd = make_run(root)
    w = watchers(root, "--settle", "30")
    wait_for(status_is(rd, "pending"), "pending at start")
    # the watcher may write a status file into the tree while it is being removed (as it
    # would for a user's `rm -r`): remove again until it is gone
    wait_for(lambda: shutil.rmtree(root, ignore_errors=True) or not root.exists(),
             "the tree to be removed")
    rc = w.proc.wait(timeout=DEADLINE)
    w.stop()
    assert rc == 2
    assert any("was deleted" in line for line in w.err)
    assert not any("Traceback" in line for line in w.err)


def test_polling_mode_judges_files_too(tmp_path: Path, watchers: Any) -> None:
    rd = make_run(tmp_path)
    w = watchers(tmp_path, "--polling", "--settle", "30")
    assert any("(polling)" in line for line in w.err)
    (rd / "quality-claude.finding-F01.md").write_text(finding(ct="corectness"))
    wait_for(lambda: "change_type_out_of_enum" in causes(rd), "the halt by polling")
    assert w.stop() == 0


def test_text_format_prints_one_line_per_status_change(tmp_path: Path) -> None:
    rd = make_run(tmp_path)
    proc = subprocess.Popen([SCRIPT, "watch", str(tmp_path), "--settle", "30"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None and proc.stdout is not None
        wait_for(lambda: "watching" in proc.stderr.readline(), "ready")
        (rd / "quality-claude.finding-F01.md").write_text(finding(ct="corectness"))
        wait_for(lambda: "change_type_out_of_enum" in causes(rd), "the halt")
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=DEADLINE)
    finally:
        if proc.poll() is None:
            proc.kill()
    lines = out.splitlines()
    assert len(lines) == 2
    assert "PENDING" in lines[0] and "awaiting quality-claude, scope-claude" in lines[0]
    assert "HALT" in lines[1] and "change_type_out_of_enum" in lines[1]


def test_relative_root_from_the_working_directory(tmp_path: Path) -> None:
    rd = make_run(tmp_path)
    proc = subprocess.Popen([SCRIPT, "watch", "--settle", "30"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        wait_for(lambda: "watching" in proc.stderr.readline(), "ready")
        (rd / "quality-claude.finding-F01.md").write_text(finding(ct="corectness"))
        wait_for(lambda: "change_type_out_of_enum" in causes(rd), "the halt")
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=DEADLINE)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0
    assert "run/reviews/design/round-01" in out


# -- faults (issue 12: #3, #7, #17) ----------------------------------------------------

def test_status_file_that_cannot_be_written_is_retried_and_the_halt_still_shown(
        tmp_path: Path, watchers: Any) -> None:
    """#3: something in the status file's place (here a directory: rename fails as it
    would on a read-only or full disk, even as root). The halt is on stdout and in
    --events at once, the failure is said once, and the file is written as soon as it
    can be."""
    rd = make_run(tmp_path)
    blocker = rd.parent / "round-01-guard.json"
    blocker.mkdir()
    (blocker / "keep").write_text("x")
    w = watchers(tmp_path, "--settle", "30")
    wait_for(lambda: any("cannot write" in line for line in w.err), "the failure said")
    (rd / "quality-claude.finding-F01.md").write_text(finding(ct="corectness"))
    wait_for(lambda: any(e.get("status") == "halt" and e.get("round_dir") == str(rd)
                         for e in (json.loads(x) for x in w.out)), "the halt on stdout")
    faults = [e for e in w.event_lines() if e.get("schema") == "qrspi-guard/watch-fault/1"]
    assert faults and faults[0]["fault"] == "status_write_failed"
    assert faults[0]["status_file"] == str(blocker)
    assert sum("cannot write" in line for line in w.err) == 1  # said once, retried quietly
    shutil.rmtree(blocker)
    wait_for(status_is(rd, "halt"), "the status file written on a retry")
    wait_for(lambda: any("is current again (status halt)" in line for line in w.err),
             "the recovery said")
    assert sum("cannot write" in line for line in w.err) == 1
    assert w.stop() == 0
    assert not list(rd.parent.glob(".guard-*"))


def test_disk_full_status_write_is_retried_until_space_returns(tmp_path: Path,
                                                                watchers: Any) -> None:
    """#3 with a real write failure: the guard's file-size limit is dropped to one byte
    (EFBIG on every write to a file, as on a full disk), then restored."""
    resource = pytest.importorskip("resource")
    if not hasattr(resource, "prlimit"):
        pytest.skip("resource.prlimit is not available")
    rd = make_run(tmp_path)
    w = watchers(tmp_path, "--settle", "30")
    wait_for(status_is(rd, "pending"), "pending at start")
    soft, hard = resource.prlimit(w.proc.pid, resource.RLIMIT_FSIZE)
    resource.prlimit(w.proc.pid, resource.RLIMIT_FSIZE, (1, hard))
    try:
        (rd / "quality-claude.finding-F01.md").write_text(finding(ct="corectness"))
        wait_for(lambda: any('"status":"halt"' in line for line in w.out),
                 "the halt on stdout while the disk is full")
        wait_for(lambda: any("cannot write" in line and "round-01-guard.json" in line
                             for line in w.err), "the status failure said")
        assert read_status(rd)["status"] == "pending"  # the old file, whole
    finally:
        resource.prlimit(w.proc.pid, resource.RLIMIT_FSIZE, (soft, hard))
    wait_for(status_is(rd, "halt"), "the status file written once space is back")
    wait_for(lambda: any("writing again" in line for line in w.err), "events resumed")
    assert sum("round-01-guard.json" in line and "cannot write" in line
               for line in w.err) == 1
    assert w.stop() == 0


def test_events_to_dev_full_is_said_once_and_sigterm_still_exits_0(tmp_path: Path) -> None:
    """#17: an events file that cannot be written never stops watch, nor its exit 0."""
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    rd = make_run(tmp_path)
    proc = subprocess.Popen([SCRIPT, "watch", str(tmp_path), "--settle", "30", "--format",
                             "json", "--events", "/dev/full"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()  # the round's first status line
        assert json.loads(first)["status"] == "pending"
        (rd / "quality-claude.finding-F01.md").write_text(finding(ct="corectness"))
        assert json.loads(proc.stdout.readline())["status"] == "halt"
        wait_for(status_is(rd, "halt"), "the status file")
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=DEADLINE)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert err.count("cannot write to events file /dev/full") == 1
    assert "internal error" not in err and "Traceback" not in err


@pytest.mark.parametrize("redirect", ["closed", "full"])
def test_closed_or_full_stdout_is_said_once_and_sigterm_still_exits_0(
        tmp_path: Path, redirect: str) -> None:
    if redirect == "full" and not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    rd = make_run(tmp_path)
    stdout: Any = subprocess.DEVNULL
    if redirect == "full":
        stdout = open("/dev/full", "w")  # noqa: SIM115
    proc = subprocess.Popen([SCRIPT, "watch", str(tmp_path), "--settle", "30"],
                            stdout=stdout, stderr=subprocess.PIPE, text=True,
                            close_fds=True,
                            preexec_fn=(lambda: os.close(1)) if redirect == "closed" else None)
    try:
        assert proc.stderr is not None
        wait_for(lambda: "watching" in proc.stderr.readline(), "ready")
        (rd / "quality-claude.finding-F01.md").write_text(finding(ct="corectness"))
        wait_for(lambda: "change_type_out_of_enum" in causes(rd), "the halt on disk")
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=DEADLINE)
    finally:
        if proc.poll() is None:
            proc.kill()
        if redirect == "full":
            stdout.close()
    assert proc.returncode == 0, err
    assert "internal error" not in err and "Traceback" not in err


@pytest.mark.parametrize("option", ["--settle", "--rescan"])
@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "-1", "1e400", "1e7", "soon"])
def test_number_option_that_is_not_a_sane_number_of_seconds_is_exit_2_one_line(
        tmp_path: Path, option: str, value: str, capsys: pytest.CaptureFixture[str]) -> None:
    """#17: nan was accepted and spun at 100 % CPU; inf and negatives too. (In process:
    the option is refused before anything starts.)"""
    from qrspi_guard.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["watch", str(tmp_path), f"{option}={value}"])
    assert exit_info.value.code == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and option in lines[0] and "number of seconds" in lines[0]
    assert captured.out == ""


def test_zero_and_fractional_seconds_are_accepted(capsys: pytest.CaptureFixture[str]) -> None:
    from qrspi_guard.cli.watch import SECONDS

    assert SECONDS.convert("0", None, None) == 0.0
    assert SECONDS.convert("0.25", None, None) == 0.25
    assert SECONDS.convert(2.0, None, None) == 2.0


def _fifo_config_run(tmp_path: Path) -> Path:
    rd = make_run(tmp_path)
    config = tmp_path / "run" / "config.md"
    config.unlink()
    os.mkfifo(config)
    return rd


def test_sigterm_during_start_up_blocked_on_a_fifo_config_exits_0(tmp_path: Path) -> None:
    """#7: whatever start-up is waiting on (here an `open` of a FIFO named config.md,
    until config.py opens it without blocking), SIGTERM stops watch with exit 0."""
    _fifo_config_run(tmp_path)
    proc = subprocess.Popen([SCRIPT, "watch", str(tmp_path), "--settle", "30"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        wait_for(lambda: "scanning" in proc.stderr.readline(), "the start-up scan")
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=DEADLINE)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert "stopped" in err and "Traceback" not in err


def test_fifo_named_config_md_neither_hangs_watch_nor_blocks_sigterm(tmp_path: Path) -> None:
    rd = _fifo_config_run(tmp_path)
    w = Watch(tmp_path, "--settle", "30")
    try:
        wait_for(lambda: any("watching" in line for line in w.err)
                 or w.proc.poll() is not None, "the watcher to be ready", deadline=10)
        doc = wait_for(lambda: read_status(rd), "the round's status")
        assert doc["status"] in ("halt", "pending")
    finally:
        assert w.stop() == 0
