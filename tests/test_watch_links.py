"""watch judges a round a symbolic link stands in place of as check does (issue 24):
`symlink_in_round_dir`, a halt in its status file and on stdout -- never the `ok` it
had before the swap, never silence."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from qrspi_guard.watch.events import EventKind, FsEvent
from tests.support import run_main
from tests.test_watch_e2e import read_status, status_is, wait_for, watchers  # noqa: F401
from tests.test_watch_policy import Harness, make_run

TAGS = ("quality-claude", "scope-claude")


def _clean(rd: Path) -> None:
    for tag in TAGS:
        (rd / f"{tag}.clean.md").write_text(f"---\nreviewer: {tag}\nround: 1\nfindings: 0\n---\n")


def _status(step: Path, n: int = 1) -> dict[str, Any]:
    return json.loads((step / f"round-{n:02d}-guard.json").read_text())


def _check_causes(root: Path) -> set[str]:
    doc = json.loads(run_main("check", "--format", "json", str(root)).stdout)
    return {d["cause"] for d in doc["diagnostics"]}


def test_a_watched_round_replaced_by_a_link_halts_as_check_says(tmp_path: Path) -> None:
    rd = make_run(tmp_path)
    _clean(rd)
    h = Harness(tmp_path, settle=2.0)
    h.advance(2.0)
    step = rd.parent
    assert _status(step)["status"] == "ok"
    elsewhere = tmp_path / "elsewhere"
    rd.rename(elsewhere)
    rd.symlink_to(elsewhere)
    h.events(FsEvent(EventKind.DIR_DELETED, str(rd)), FsEvent(EventKind.CREATED, str(rd)))
    assert "symlink_in_round_dir" in _check_causes(tmp_path / "run")
    doc = _status(step)
    assert doc["status"] == "halt"
    assert [x["cause"] for x in doc["halts"]] == ["symlink_in_round_dir"]
    last = json.loads(h.lines[-1])
    assert last["status"] == "halt" and last["previous"] is None
    # a real directory back: judged as usual again
    rd.unlink()
    elsewhere.rename(rd)
    h.events(FsEvent(EventKind.DIR_CREATED, str(rd)))
    h.advance(2.0)
    assert _status(step)["status"] == "ok"


def test_a_link_appearing_as_a_round_is_a_halt_without_waiting_for_the_rescan(
        tmp_path: Path) -> None:
    rd = make_run(tmp_path)
    _clean(rd)
    h = Harness(tmp_path, settle=2.0)
    other = tmp_path / "other"
    other.mkdir()
    _clean(other)
    link = rd.parent / "round-02"
    link.symlink_to(other)
    h.events(FsEvent(EventKind.CREATED, str(link)))
    assert _status(rd.parent, 2)["status"] == "halt"
    assert any(json.loads(x)["status"] == "halt" and x.count("round-02") for x in h.lines)


def test_rounds_under_a_step_directory_swapped_for_a_link_halt_on_stdout_only(
        tmp_path: Path) -> None:
    rd = make_run(tmp_path)
    _clean(rd)
    h = Harness(tmp_path, settle=2.0)
    h.advance(2.0)
    step = rd.parent
    held = tmp_path / "held"
    step.rename(held)
    step.symlink_to(held)
    h.events(FsEvent(EventKind.DIR_DELETED, str(step)))
    last = json.loads(h.lines[-1])
    assert last["status"] == "halt" and last["status_file"] is None
    assert last["halts"][0]["cause"] == "symlink_in_round_dir"
    assert _status(held)["status"] == "ok"  # never written through the link


def test_watch_end_to_end_halts_a_round_swapped_for_a_link(tmp_path: Path,
                                                           watchers: Any) -> None:  # noqa: F811
    rd = make_run(tmp_path)
    _clean(rd)
    w = watchers(tmp_path, "--settle", "0.2", "--rescan", "3600")
    wait_for(status_is(rd, "ok"), "ok at start")
    elsewhere = tmp_path / "elsewhere"
    os.rename(rd, elsewhere)
    os.symlink(elsewhere, rd)
    wait_for(status_is(rd, "halt"), "the halt after the swap")
    assert [h["cause"] for h in (read_status(rd) or {})["halts"]] == ["symlink_in_round_dir"]
    assert w.stop() == 0
    assert [x["status"] for x in w.event_lines()][-2:] == ["ok", "halt"]
