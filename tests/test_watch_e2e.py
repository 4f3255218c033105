"""watch end to end: the installed console script in a subprocess, a real observer and
real files in temp dirs. Every wait is on a condition with a deadline."""

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
DEADLINE = 10.0

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
    lines = [json.loads(x) for x in w.out]
    assert len(lines) == len(rounds) and all(x["previous"] is None for x in lines)
    assert w.stop() == 0


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
    statuses = [x["status"] for x in w.event_lines()]
    assert statuses == ["pending", "halt", "pending"]
    assert w.stop() == 0


def test_slow_writer_pausing_between_pieces_never_yields_a_halt(tmp_path: Path,
                                                                watchers: Any) -> None:
    rd = make_run(tmp_path)
    w = watchers(tmp_path, "--settle", "0.3")
    wait_for(status_is(rd, "pending"), "pending at start")
    text = finding()
    pieces = [text[i:i + 40] for i in range(0, len(text), 40)]
    seen: set[str] = set()
    with open(rd / "quality-claude.finding-F01.md", "w") as fh:
        for piece in pieces[:6]:
            fh.write(piece)
            fh.flush()
            # meanwhile another reviewer finishes: the round is re-evaluated
            deadline = time.monotonic() + 0.4
            while time.monotonic() < deadline:
                seen.add((read_status(rd) or {}).get("status", ""))
                time.sleep(0.02)
        (rd / "scope-claude.clean.md").write_text("---\nreviewer: scope-claude\nround: 1\n"
                                                  "findings: 0\n---\n")
        wait_for(lambda: "scope-claude" in (read_status(rd) or {}).get("reported_tags", []),
                 "the other reviewer's file to be judged")
        for piece in pieces[6:]:
            fh.write(piece)
    wait_for(status_is(rd, "ok"), "ok once the writer closed")
    seen |= {x["status"] for x in w.event_lines()}
    assert "halt" not in seen
    assert w.stop() == 0


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
    wait_for(lambda: causes(step) == {"change_type_out_of_enum", "unknown_file_in_round_dir"},
             "round-02's halts")
    assert read_status(step)["reported_tags"] == ["quality-claude", "scope-claude"]
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
    rd = make_run(tmp_path)
    w = watchers(tmp_path, "--settle", "30")
    wait_for(status_is(rd, "pending"), "pending at start")
    body = finding()
    for i in range(1, 1001):
        ct = "corectness" if i == 1000 else "clarity"
        text = body.replace("F01", f"F{i:04d}").replace("clarity", ct)
        (rd / f"quality-claude.finding-F{i:04d}.md").write_text(text)
    wait_for(lambda: "change_type_out_of_enum" in causes(rd), "the last file's halt")
    assert len(read_status(rd)["halts"]) == 1
    assert w.stop() == 0
    summary = next(line for line in w.err if "stopped" in line)
    judged = int(summary.split("(")[1].split(" ")[0])
    writes = int(summary.split(", ")[-1].split(" ")[0])
    assert judged == 1000
    assert writes <= 100  # vs. 1,000 files and 3,000 events


def test_settle_turns_a_silent_reviewer_into_expected_tag_no_output(tmp_path: Path,
                                                                    watchers: Any) -> None:
    rd = make_run(tmp_path)
    w = watchers(tmp_path, "--settle", "0.5")
    (rd / "quality-claude.finding-F01.md").write_text(finding())
    wait_for(status_is(rd, "halt"), "the round to settle")
    halts = read_status(rd)["halts"]
    assert [(h["cause"], h.get("tag")) for h in halts] == [("expected_tag_no_output",
                                                            "scope-claude")]
    assert halts[0]["message"] == "Reviewer scope-claude wrote no per-finding files"
    assert w.stop() == 0


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
    assert "0 status write(s)" in w3.err[-1]


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
    shutil.rmtree(root)
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
