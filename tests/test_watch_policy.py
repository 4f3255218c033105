"""watch: the settle/completion policy and the loop, driven by scripted events and a
fake clock (no observer, no waiting). Real files only where the loop reads them."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from qrspi_guard.contract.runconfig import Overrides
from qrspi_guard.engine import evaluate_round
from qrspi_guard.engine.configs import read_config
from qrspi_guard.engine.discover import discover_dir
from qrspi_guard.watch.events import EventKind, FsEvent, ScriptedSource, translate
from qrspi_guard.watch.judge import RoundJudge
from qrspi_guard.watch.loop import Options, Watcher
from qrspi_guard.watch.policy import (
    Policy,
    Probe,
    frontmatter_closed,
    lease_probe,
)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "rounds"


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += seconds


class Prober:
    """Scripted probe answers per path (default: nobody is writing)."""

    def __init__(self) -> None:
        self.answers: dict[str, Probe] = {}
        self.calls: list[str] = []

    def __call__(self, path: str) -> Probe:
        self.calls.append(path)
        return self.answers.get(path, Probe.NO_WRITER)


def make_policy(clock: Clock, prober: Prober | None = None, closed: bool = True,
                **kw: float) -> Policy:
    return Policy(clock, prober or Prober(), lambda p: closed, **kw)  # type: ignore[arg-type]


# -- file settling ---------------------------------------------------------------------

def test_close_after_write_settles_a_file_at_once_without_probing() -> None:
    clock, prober = Clock(), Prober()
    p = make_policy(clock, prober)
    p.round_seen("R")
    p.file_event("R/a.md", "R", EventKind.CREATED)
    p.file_event("R/a.md", "R", EventKind.MODIFIED)
    p.file_event("R/a.md", "R", EventKind.CLOSED)
    step = p.step()
    assert step.settled == ["R/a.md"]
    assert step.evaluate == {"R"}
    assert prober.calls == []


def test_rename_into_place_settles_at_once() -> None:
    clock = Clock()
    p = make_policy(clock)
    p.round_seen("R")
    p.file_event("R/a.md", "R", EventKind.MOVED_IN)
    assert p.step().settled == ["R/a.md"]


def test_slow_writer_holding_the_file_never_settles_however_long_it_pauses() -> None:
    clock, prober = Clock(), Prober()
    prober.answers["R/a.md"] = Probe.WRITER
    p = make_policy(clock, prober, closed=False, settle=2.0, quiet=0.5)
    p.round_seen("R")
    p.file_event("R/a.md", "R", EventKind.CREATED)
    for _ in range(100):  # 100 pauses of 1 s between pieces, then 60 s of silence
        p.file_event("R/a.md", "R", EventKind.MODIFIED)
        clock.advance(1.0)
        assert p.step().settled == []
    clock.advance(60)
    step = p.step()
    assert step.settled == []
    assert not p.is_complete("R")  # a round with a writer in it is not quiet
    p.file_event("R/a.md", "R", EventKind.CLOSED)
    assert p.step().settled == ["R/a.md"]


def test_file_created_by_a_move_from_outside_settles_when_no_writer_holds_it() -> None:
    clock, prober = Clock(), Prober()
    p = make_policy(clock, prober)
    p.round_seen("R")
    p.file_event("R/a.md", "R", EventKind.CREATED)
    assert p.step().settled == ["R/a.md"]
    assert prober.calls == ["R/a.md"]


def test_modified_without_close_waits_for_the_quiet_time_then_probes() -> None:
    clock, prober = Clock(), Prober()
    p = make_policy(clock, prober, quiet=0.5)
    p.round_seen("R")
    p.file_event("R/a.md", "R", EventKind.MODIFIED)
    assert p.step().settled == []
    assert p.next_deadline() == pytest.approx(clock.t + 0.5)
    clock.advance(0.5)
    assert p.step().settled == ["R/a.md"]


def test_probe_that_cannot_tell_falls_back_to_quiet_time_and_closed_frontmatter() -> None:
    clock, prober = Clock(), Prober()
    prober.answers["R/a.md"] = Probe.UNKNOWN
    p = make_policy(clock, prober, quiet=0.5)
    p.round_seen("R")
    p.file_event("R/a.md", "R", EventKind.CREATED)
    assert p.step().settled == []
    clock.advance(0.49)
    assert p.step().settled == []
    clock.advance(0.01)
    assert p.step().settled == ["R/a.md"]


def test_unclosed_frontmatter_is_judged_after_settle_seconds_of_quiet() -> None:
    clock, prober = Clock(), Prober()
    prober.answers["R/a.md"] = Probe.UNKNOWN
    p = make_policy(clock, prober, closed=False, quiet=0.5, settle=2.0)
    p.round_seen("R")
    p.file_event("R/a.md", "R", EventKind.CREATED)
    for _ in range(19):
        clock.advance(0.1)
        assert p.step().settled == []
    clock.advance(0.1)
    assert p.step().settled == ["R/a.md"]


def test_polling_mode_needs_two_polls_without_change() -> None:
    clock, prober = Clock(), Prober()
    prober.answers["R/a.md"] = Probe.UNKNOWN
    p = make_policy(clock, prober, quiet=0.1, polling=True, poll_interval=0.5)
    p.round_seen("R")
    p.file_event("R/a.md", "R", EventKind.MODIFIED)
    clock.advance(0.5)
    p.file_event("R/a.md", "R", EventKind.MODIFIED)  # changed at the next poll
    clock.advance(0.99)
    assert p.step().settled == []
    clock.advance(0.01)
    assert p.step().settled == ["R/a.md"]


def test_burst_of_1000_files_settles_each_file_once_and_evaluates_the_round_once() -> None:
    clock, prober = Clock(), Prober()
    p = make_policy(clock, prober)
    p.round_seen("R")
    p.step()
    for i in range(1000):
        path = f"R/t{i}.md"
        p.file_event(path, "R", EventKind.CREATED)
        p.file_event(path, "R", EventKind.MODIFIED)
        p.file_event(path, "R", EventKind.CLOSED)
    step = p.step()
    assert sorted(step.settled) == sorted(f"R/t{i}.md" for i in range(1000))
    assert step.evaluate == {"R"}
    assert prober.calls == []
    assert p.step().settled == []


def test_deletion_marks_the_round_for_re_evaluation_and_forgets_the_file() -> None:
    clock = Clock()
    p = make_policy(clock)
    p.round_seen("R")
    p.step()
    p.file_event("R/a.md", "R", EventKind.MODIFIED)
    p.file_deleted("R/a.md", "R")
    step = p.step()
    assert step.evaluate == {"R"} and step.settled == []
    assert p.unsettled("R") == set()


# -- round completion ------------------------------------------------------------------

def test_round_completes_after_settle_seconds_without_a_change() -> None:
    clock = Clock()
    p = make_policy(clock, settle=2.0)
    p.round_seen("R")
    p.step()
    clock.advance(1.5)
    p.file_event("R/a.md", "R", EventKind.CLOSED)
    p.step()
    clock.advance(1.9)
    assert p.step().evaluate == set() and not p.is_complete("R")
    assert p.next_deadline() == pytest.approx(clock.t + 0.1)
    clock.advance(0.1)
    assert p.step().evaluate == {"R"}
    assert p.is_complete("R")


def test_an_old_round_seen_at_start_is_complete_at_once() -> None:
    clock = Clock()
    p = make_policy(clock, settle=2.0)
    p.round_seen("R", age=3600)
    p.step()
    assert p.is_complete("R")


def test_verified_or_next_round_completes_a_round_and_it_stays_complete() -> None:
    clock = Clock()
    p = make_policy(clock, settle=2.0)
    p.round_seen("R")
    p.step()
    p.round_complete("R")
    assert p.step().evaluate == {"R"}
    p.file_event("R/b.md", "R", EventKind.CLOSED)  # a later change: still complete
    p.step()
    assert p.is_complete("R")


# -- rescans ---------------------------------------------------------------------------

def test_rescan_runs_every_interval_and_after_a_sign_of_loss() -> None:
    clock = Clock()
    p = make_policy(clock, rescan=30.0)
    assert not p.step().rescan
    clock.advance(29.9)
    assert not p.step().rescan
    clock.advance(0.1)
    assert p.step().rescan
    assert not p.step().rescan
    p.loss()
    assert p.step().rescan
    assert p.next_deadline() == pytest.approx(clock.t + 30.0)


def test_no_deadline_when_idle_and_rescans_are_off() -> None:
    clock = Clock()
    p = make_policy(clock, rescan=0)
    p.round_seen("R", age=100)
    p.step()
    assert p.next_deadline() is None


# -- the pieces the policy is given ----------------------------------------------------

@pytest.mark.parametrize(("data", "closed"), [
    (b"", False), (b"-", False), (b"---", False), (b"---\n", False),
    (b"---\nfinding_id: R1-F01\n", False), (b"---\na: 1\n---\n", True),
    (b"---\na: 1\n---", True), (b"\xef\xbb\xbf---\na: 1\n---\nbody\n", True),
    (b"score: 90\nreason: ok\n", True), (b"plain text", True),
    (b"---\r\na: 1\r\n---\r\n", True),
])
def test_frontmatter_closed(data: bytes, closed: bool) -> None:
    assert frontmatter_closed(data) is closed


def test_lease_probe_sees_a_writer_and_its_absence(tmp_path: Path) -> None:
    import signal

    old = signal.signal(signal.SIGIO, signal.SIG_IGN)
    try:
        path = tmp_path / "a.md"
        with open(path, "w") as fh:
            fh.write("---\n")
            assert lease_probe(str(path)) is Probe.WRITER
        assert lease_probe(str(path)) is Probe.NO_WRITER
        assert lease_probe(str(tmp_path / "missing.md")) is Probe.UNKNOWN
    finally:
        signal.signal(signal.SIGIO, old)


def test_watchdog_events_translate_to_plain_events() -> None:
    from watchdog import events
    from watchdog.events import DirCreatedEvent, DirModifiedEvent, FileClosedEvent, FileMovedEvent

    assert translate(FileClosedEvent("/r/a.md")) == [FsEvent(EventKind.CLOSED, "/r/a.md")]
    assert translate(FileMovedEvent("/r/.a.tmp", "/r/a.md")) == [
        FsEvent(EventKind.DELETED, "/r/.a.tmp"), FsEvent(EventKind.MOVED_IN, "/r/a.md")]
    assert translate(DirCreatedEvent("/r/round-02")) == [
        FsEvent(EventKind.DIR_CREATED, "/r/round-02")]
    assert translate(DirModifiedEvent("/r")) == []
    # a read-only close (watchdog >= 5 reports it) commits nothing
    closed_no_write = getattr(events, "FileClosedNoWriteEvent", None)
    if closed_no_write is not None:
        assert translate(closed_no_write("/r/a.md")) == []


# -- the loop over a scripted source ---------------------------------------------------

FINDING = """---
finding_id: R1-F0{n}
severity: medium
change_type: {ct}
referenced_files: [src/a.py:L10-L20]
artifact: design
round: 1
reviewer: {tag}
---

Something specific is wrong here and this sentence says what would fix it.
"""


def finding(n: int = 1, tag: str = "quality-claude", ct: str = "clarity") -> str:
    return FINDING.format(n=n, tag=tag, ct=ct)


def make_run(tmp_path: Path) -> Path:
    art = tmp_path / "run"
    (art / "reviews" / "design" / "round-01").mkdir(parents=True)
    (art / "config.md").write_text("---\nsecond_reviewer: false\nverifier_enabled: false\n---\n")
    return art / "reviews" / "design" / "round-01"


class Harness:
    def __init__(self, root: Path, settle: float = 2.0, prober: Prober | None = None) -> None:
        self.clock = Clock()
        self.lines: list[str] = []
        self.source = ScriptedSource()
        self.w = Watcher(str(root), Overrides(), self.source,
                         Options(settle=settle, rescan=30.0, fmt="json"),
                         out=self.lines.append, err=lambda s: None, clock=self.clock,
                         wall=lambda: 0.0,  # every file looks brand new: rounds start open
                         probe=prober or Prober(), peek=lambda p: True)
        self.w.discover()
        self.w.tick()

    def events(self, *events: FsEvent) -> None:
        self.w.apply(list(events))
        self.w.tick()

    def advance(self, seconds: float) -> None:
        self.clock.advance(seconds)
        self.w.tick()


def status(round_dir: Path) -> dict:
    n = int(round_dir.name.split("-")[1])
    return json.loads((round_dir.parent / f"round-{n:02d}-guard.json").read_text())


def test_loop_settle_turns_a_missing_reviewer_into_expected_tag_no_output(tmp_path: Path) -> None:
    rd = make_run(tmp_path)
    h = Harness(tmp_path, settle=2.0)
    assert status(rd)["status"] == "pending"
    assert status(rd)["awaiting"] == ["quality-claude", "scope-claude"]
    (rd / "quality-claude.finding-F01.md").write_text(finding())
    h.events(FsEvent(EventKind.CLOSED, str(rd / "quality-claude.finding-F01.md")))
    assert status(rd)["status"] == "pending" and status(rd)["awaiting"] == ["scope-claude"]
    h.advance(1.99)
    assert status(rd)["status"] == "pending"
    h.advance(0.01)
    doc = status(rd)
    assert doc["status"] == "halt"
    assert [(x["cause"], x["tag"]) for x in doc["halts"]] == [
        ("expected_tag_no_output", "scope-claude")]
    assert [json.loads(line)["status"] for line in h.lines] == ["pending", "halt"]


def test_loop_burst_of_1000_files_judged_once_each_with_bounded_status_writes(
        tmp_path: Path) -> None:
    rd = make_run(tmp_path)
    h = Harness(tmp_path)
    events = []
    for i in range(1, 1001):
        name = f"quality-claude.finding-F{i:04d}.md"
        (rd / name).write_text(finding().replace("R1-F01", f"R1-F{i}"))
        p = str(rd / name)
        events += [FsEvent(EventKind.CREATED, p), FsEvent(EventKind.MODIFIED, p),
                   FsEvent(EventKind.CLOSED, p)]
    for chunk in range(0, len(events), 300):  # delivered in several batches
        h.events(*events[chunk:chunk + 300])
    t = h.w.rounds[str(rd)]
    assert t.judge.parses == 1000
    assert t.writes <= 6
    assert status(rd)["status"] == "pending"
    h.events(*events[:30])  # late duplicates change nothing
    assert t.judge.parses == 1000


def test_loop_never_judges_a_file_a_writer_still_holds(tmp_path: Path) -> None:
    rd = make_run(tmp_path)
    prober = Prober()
    h = Harness(tmp_path, prober=prober)
    path = rd / "quality-claude.finding-F01.md"
    prober.answers[str(path)] = Probe.WRITER
    path.write_text("---\nfinding_id: R1-F01\nseverity: med")  # half written
    h.events(FsEvent(EventKind.CREATED, str(path)), FsEvent(EventKind.MODIFIED, str(path)))
    for _ in range(50):
        h.advance(1.0)
        assert status(rd)["status"] == "pending"
    path.write_text(finding())
    h.events(FsEvent(EventKind.CLOSED, str(path)))
    assert status(rd)["reported_tags"] == ["quality-claude"]
    assert status(rd)["halts"] == []


def test_loop_fix_on_disk_clears_the_halt(tmp_path: Path) -> None:
    rd = make_run(tmp_path)
    h = Harness(tmp_path)
    path = rd / "quality-claude.finding-F01.md"
    path.write_text(finding(ct="corectness"))
    h.events(FsEvent(EventKind.CLOSED, str(path)))
    assert status(rd)["halts"][0]["cause"] == "change_type_out_of_enum"
    path.write_text(finding())
    h.events(FsEvent(EventKind.CLOSED, str(path)))
    assert status(rd)["status"] == "pending"


def test_loop_reconcile_finds_changes_whose_events_were_lost(tmp_path: Path) -> None:
    rd = make_run(tmp_path)
    h = Harness(tmp_path)
    (rd / "quality-claude.finding-F01.md").write_text(finding(ct="corectness"))
    new_round = rd.parent / "round-02"
    new_round.mkdir()
    (new_round / "notes.txt").write_text("raw stdout\n")
    h.advance(1.0)
    assert status(rd)["halts"] == []  # no event came: nothing known yet
    h.events(FsEvent(EventKind.LOSS, "", "queue overflow"))
    assert h.w.policy.is_complete(str(rd))  # a later round appeared
    assert {x["cause"] for x in status(rd)["halts"]} == {"change_type_out_of_enum",
                                                         "expected_tag_no_output"}
    assert status(new_round)["halts"][0]["cause"] == "unknown_file_in_round_dir"


def test_loop_verified_file_completes_the_round(tmp_path: Path) -> None:
    rd = make_run(tmp_path)
    h = Harness(tmp_path, settle=60)
    verified = rd.parent / "round-01-verified.md"
    verified.write_text("---\nscored: 0\nkept: 0\ndropped: 0\nfailed: 0\nclean: 0\n---\n")
    h.events(FsEvent(EventKind.CLOSED, str(verified)))
    assert status(rd)["status"] == "halt"
    assert {x["cause"] for x in status(rd)["halts"]} == {"expected_tag_no_output"}


def test_loop_writes_status_only_when_content_changes(tmp_path: Path) -> None:
    rd = make_run(tmp_path)
    h = Harness(tmp_path)
    t = h.w.rounds[str(rd)]
    writes = t.writes
    (rd / "quality-claude.clean.md").write_text("---\nreviewer: quality-claude\nround: 1\n"
                                                "findings: 0\n---\n")
    h.events(FsEvent(EventKind.CLOSED, str(rd / "quality-claude.clean.md")))
    assert t.writes == writes + 1
    os.utime(rd / "quality-claude.clean.md", ns=(1, 1))  # new signature, same content
    h.events(FsEvent(EventKind.CLOSED, str(rd / "quality-claude.clean.md")))
    assert t.writes == writes + 1


@pytest.mark.parametrize("root", ["example", "example-fanin", "valid", "causes"])
def test_cached_judging_agrees_with_engine_evaluate_round(root: str) -> None:
    overrides = Overrides(second_reviewer=True)
    refs = [r for r in discover_dir(str(FIXTURES / root)) if not hasattr(r, "cause")]
    assert refs
    for ref in refs:
        run = read_config(ref.artifact_dir, overrides)
        judge = RoundJudge(ref)
        for name in judge.listing() or []:
            judge.judge(name)
        for complete in (True, False):
            mine, unseen = judge.evaluate(run, overrides, complete)
            theirs = evaluate_round(ref, run, overrides, complete=complete, ignore_temp=True)
            assert unseen == []
            assert mine.status == theirs.status, ref.round_dir
            assert [d.to_dict() for d in mine.diagnostics] == \
                [d.to_dict() for d in theirs.diagnostics], ref.round_dir
            assert mine.awaiting == theirs.awaiting and mine.files == theirs.files


def test_loop_config_change_is_re_read_and_re_judges_its_rounds(tmp_path: Path) -> None:
    rd = make_run(tmp_path)
    h = Harness(tmp_path)
    assert status(rd)["expected_tags"] == ["quality-claude", "scope-claude"]
    config = tmp_path / "run" / "config.md"
    config.write_text("---\nsecond_reviewer: true\nverifier_enabled: false\n---\n")
    h.events(FsEvent(EventKind.CLOSED, str(config)))
    assert status(rd)["expected_tags"] == ["quality-claude", "scope-claude", "quality-codex",
                                           "scope-codex"]


# -- the real source's fallbacks (no events needed) ------------------------------------

def test_inotify_watch_limit_falls_back_to_polling_and_says_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import errno

    import watchdog.observers

    from qrspi_guard.watch.events import WatchdogSource

    class Exhausted:
        def __init__(self, *a: object, **kw: object) -> None:
            pass

        def schedule(self, *a: object, **kw: object) -> None:
            raise OSError(errno.ENOSPC, "inotify watch limit reached")

        def stop(self) -> None:
            pass

    monkeypatch.setattr(watchdog.observers, "Observer", Exhausted)
    src = WatchdogSource(str(tmp_path))
    src.start()
    try:
        assert src.mode == "polling"
        assert src.note is not None and "out of inotify watches" in src.note
    finally:
        src.stop()


def test_watchdog_overflow_warning_becomes_a_loss_event(tmp_path: Path) -> None:
    import logging

    from qrspi_guard.watch.events import WatchdogSource

    src = WatchdogSource(str(tmp_path))
    src.start()
    try:
        logging.getLogger("watchdog.observers.inotify").warning(
            "Inotify queue overflowed; reconciling recursive watches below %r", "x")
        events = src.get(5.0)
        assert EventKind.LOSS in {e.kind for e in events}
    finally:
        src.stop()


def test_loop_tool_temp_file_renamed_away_at_once_never_halts(tmp_path: Path) -> None:
    rd = make_run(tmp_path)
    h = Harness(tmp_path)
    target = rd / "quality-claude.finding-F01.md"
    temp = rd / "sedX1b2c3"  # `sed -i` writes a sibling temp file, then renames it over
    temp.write_text(finding())
    h.events(FsEvent(EventKind.CREATED, str(temp)), FsEvent(EventKind.CLOSED, str(temp)))
    assert status(rd)["halts"] == []
    os.rename(temp, target)
    h.events(FsEvent(EventKind.DELETED, str(temp)), FsEvent(EventKind.MOVED_IN, str(target)))
    h.advance(1.0)
    assert status(rd)["halts"] == [] and status(rd)["reported_tags"] == ["quality-claude"]
    assert [json.loads(line)["status"] for line in h.lines] == ["pending"]


def test_loop_unknown_file_that_stays_halts_after_the_quiet_time(tmp_path: Path) -> None:
    rd = make_run(tmp_path)
    h = Harness(tmp_path)
    (rd / "notes.txt").write_text("raw stdout\n")
    h.events(FsEvent(EventKind.CLOSED, str(rd / "notes.txt")))
    assert status(rd)["halts"] == []
    h.advance(0.5)
    assert status(rd)["halts"][0]["cause"] == "unknown_file_in_round_dir"
