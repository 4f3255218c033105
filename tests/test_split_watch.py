"""`watch` and split's residue: `split_incomplete` only while no split holds the round's
lock, seen after a split is killed (at the next rescan), gone once repaired. The loop
runs in-process on a scripted event source with a fake clock."""

from __future__ import annotations

import json
from pathlib import Path

from qrspi_guard.contract.runconfig import Overrides
from qrspi_guard.engine.roundlock import round_lock
from qrspi_guard.split.residue import new_name
from qrspi_guard.watch.events import EventKind, FsEvent, ScriptedSource
from qrspi_guard.watch.loop import Options, Watcher
from qrspi_guard.watch.policy import Probe

RESIDUE = new_name("0123456789ab", "quality-codex.finding-F01.md")


class Loop:
    def __init__(self, root: Path) -> None:
        self.t = 1000.0
        self.w = Watcher(str(root), Overrides(), ScriptedSource(),
                         Options(settle=2.0, rescan=30.0, fmt="json"),
                         out=lambda s: None, err=lambda s: None, clock=lambda: self.t,
                         wall=lambda: 0.0, probe=lambda p: Probe.NO_WRITER,
                         peek=lambda p: True)
        self.w.discover()
        self.w.tick()

    def events(self, *events: FsEvent) -> None:
        self.w.apply(list(events))
        self.w.tick()

    def rescan(self) -> None:
        self.t += 30.0
        self.w.tick()


def clean_round(tmp_path: Path) -> Path:
    art = tmp_path / "run"
    d = art / "reviews" / "design" / "round-01"
    d.mkdir(parents=True)
    (art / "config.md").write_text("---\nsecond_reviewer: false\nverifier_enabled: false\n---\n")
    for tag in ("quality-claude", "scope-claude"):
        (d / f"{tag}.clean.md").write_text(f"---\nreviewer: {tag}\nround: 1\nfindings: 0\n---\n")
    return d


def halts(d: Path) -> list[str]:
    doc = json.loads((d.parent / "round-01-guard.json").read_text())
    return [h["cause"] for h in doc["halts"]]


def test_watch_ignores_residue_while_a_split_holds_the_lock_and_reports_it_after_a_kill(
        tmp_path: Path) -> None:
    d = clean_round(tmp_path)
    loop = Loop(tmp_path)
    assert halts(d) == []
    with round_lock(str(d)):  # a split at work: its temp file is not a defect
        (d / RESIDUE).write_bytes(b"partial")
        loop.events(FsEvent(EventKind.CREATED, str(d / RESIDUE)),
                    FsEvent(EventKind.CLOSED, str(d / RESIDUE)))
        assert halts(d) == []
        loop.rescan()
        assert halts(d) == []
    # the split died (the kernel dropped its lock, and no file event says so)
    loop.rescan()
    assert halts(d) == ["split_incomplete"]
    (d / RESIDUE).unlink()  # the next split rolled it back
    loop.events(FsEvent(EventKind.DELETED, str(d / RESIDUE)))
    assert halts(d) == []


def test_watch_reports_residue_found_at_start(tmp_path: Path) -> None:
    d = clean_round(tmp_path)
    (d / RESIDUE).write_bytes(b"partial")
    Loop(tmp_path)
    assert halts(d) == ["split_incomplete"]
