"""generations.md in `watch`: each round judged as `check` judges it (its generation, the
fan-in recount), and rounds without evidence re-judged when the run's majority changes.

Driven by scripted events and a fake clock, over real files (as test_watch_policy.py).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from qrspi_guard.contract.runconfig import Overrides
from qrspi_guard.watch.events import EventKind, FsEvent, ScriptedSource
from qrspi_guard.watch.loop import Options, Watcher
from qrspi_guard.watch.policy import Probe
from tests.genkit import (
    AUDIT,
    KEPT,
    audit_json,
    check,
    fanin_round,
    finding_text,
    kept_txt,
    new_run,
    put,
)

Q, S = "quality-claude", "scope-claude"


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


class Watch:
    """A Watcher over *root* with a fake clock; every file settles at once."""

    def __init__(self, root: Path, protocol: str = "auto") -> None:
        self.clock = Clock()
        self.w = Watcher(str(root), Overrides(protocol=protocol), ScriptedSource(),
                         Options(settle=2.0, rescan=30.0, fmt="json"), out=lambda s: None,
                         err=lambda s: None, clock=self.clock, wall=lambda: 0.0,
                         probe=lambda p: Probe.NO_WRITER, peek=lambda p: True)
        self.w.discover()
        self.settle()

    def settle(self) -> None:
        for _ in range(3):
            self.w.tick()
            self.clock.t += 10
        self.w.tick()

    def events(self, *events: FsEvent) -> None:
        self.w.apply(list(events))
        self.settle()


def status(round_dir: Path) -> dict:
    n = int(round_dir.name.split("-")[1])
    return json.loads((round_dir.parent / f"round-{n:02d}-guard.json").read_text())


def shown(doc: dict) -> list[tuple[str, str | None]]:
    return sorted((d["cause"], d.get("file")) for d in doc["halts"] + doc["warnings"])


def _verified_fanin(tmp_path: Path) -> tuple[object, Path]:
    run = new_run(tmp_path)
    d = fanin_round(run, "design", 1, [(Q, 1, "correctness", 90), (Q, 2, "style", 10)],
                    cleans=[S])
    put(d, AUDIT, audit_json(2, 1, 1))
    put(d, KEPT, kept_txt(d, [f"{Q}.finding-F01.md"]))
    return run, d


def test_check_accepts_the_verified_fan_in_round_used_below(tmp_path: Path) -> None:
    run, _ = _verified_fanin(tmp_path)
    result = check(run.root)
    assert result.rounds[0].status == "ok" and result.diagnostics == []


def test_watch_accepts_a_verified_fan_in_round_that_check_accepts(tmp_path: Path) -> None:
    run, d = _verified_fanin(tmp_path)
    Watch(tmp_path)
    doc = status(d)
    assert doc["protocol"] == "fan-in"
    assert (doc["status"], shown(doc)) == ("ok", [])


def test_watch_judges_an_apply_fix_rounds_clean_sentinel_as_check_does(tmp_path: Path) -> None:
    run = new_run(tmp_path)
    d = run.round_dir("design", 1)
    put(d, f"{Q}.finding-F01.md", finding_text(Q, 1))
    put(d, f"{Q}.finding-F01.score.yml", "score: 90\nreason: the cite holds\n")
    put(d, f"{S}.clean.md", f"---\nreviewer: {S}\nfindings: 0\n---\n")
    assert [x.cause for x in check(run.root).diagnostics] == ["missing_round"]
    Watch(tmp_path)
    doc = status(d)
    assert doc["protocol"] == "apply-fix"
    assert ("missing_round", f"{S}.clean.md") in shown(doc)


def test_watch_writes_the_protocol_each_round_is_judged_by(tmp_path: Path) -> None:
    run = new_run(tmp_path)
    d1 = run.round_dir("design", 1)
    put(d1, f"{Q}.finding-F01.md", finding_text(Q, 1))
    put(d1, f"{Q}.finding-F01.score.yml", "score: 90\nreason: the cite holds\n")
    run.clean("design", 1, S)
    d2 = fanin_round(run, "goals", 1, [(Q, 1, "scope", 90)], cleans=[S])
    Watch(tmp_path)
    assert status(d1)["protocol"] == "apply-fix" and status(d2)["protocol"] == "fan-in"


def test_watch_rejudges_a_round_without_evidence_when_the_majority_changes(
        tmp_path: Path) -> None:
    run = new_run(tmp_path)
    for tag in (Q, S):
        run.clean("design", 1, tag)
    clean = run.root / "reviews/design/round-01"
    watch = Watch(tmp_path)
    assert status(clean)["protocol"] == "fan-in"  # no decided round: fan-in
    d = run.round_dir("goals", 1)
    f = put(d, f"{Q}.finding-F01.md", finding_text(Q, 1, step="goals"))
    s = put(d, f"{Q}.finding-F01.score.yml", "score: 90\nreason: the cite holds\n")
    watch.events(FsEvent(EventKind.DIR_CREATED, str(d)), FsEvent(EventKind.CLOSED, str(f)),
                 FsEvent(EventKind.CLOSED, str(s)))
    assert status(d)["protocol"] == "apply-fix"
    assert status(clean)["protocol"] == "apply-fix"


def test_watch_never_writes_a_status_file_for_a_suffixed_round_dir(tmp_path: Path) -> None:
    run = new_run(tmp_path)
    for tag in (Q, S):
        run.clean("design", 5, tag)
    d = run.root / "reviews/design/round-05-fanout"
    put(d, f"{Q}.finding-F01.md", finding_text(Q, 1, "corectness", round_no=5))
    Watch(tmp_path)
    steps = run.root / "reviews/design"
    assert sorted(p.name for p in steps.glob("*guard*")) == ["round-05-guard.json"]
    assert status(steps / "round-05")["halts"] == []


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_watch_judges_an_anchored_round_with_the_config_as_of_its_commit(
        tmp_path: Path) -> None:
    from tests.test_generations_config import Repo, _two_eras

    repo = Repo(tmp_path / "repo")
    old, _ = _two_eras(repo)
    assert {r.ref.round: r.status for r in check(repo.run.root).rounds}[1] == "ok"
    Watch(repo.top)
    doc = status(repo.run.root / "reviews/design/round-01")
    assert doc["config_source"] == old and doc["status"] == "ok"
