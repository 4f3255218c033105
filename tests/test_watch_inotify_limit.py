"""watch out of inotify watches (issue 24): watchdog swallows a failed watch on a
directory below ROOT, so the tree's new parts went unwatched until the next rescan
while watch still said "(inotify)". ENOSPC is injected at the source's seam
(``WatchdogSource(add_watch=...)``, in place of the kernel's ``inotify_add_watch``);
the source falls back to polling for the whole tree and says so."""

from __future__ import annotations

import ctypes
import errno
import json
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from qrspi_guard.contract.runconfig import Overrides
from qrspi_guard.watch.events import EventKind, WatchdogSource
from qrspi_guard.watch.loop import Options, Watcher
from tests.test_watch_e2e import finding, make_run, wait_for

inotify_c = pytest.importorskip("watchdog.observers.inotify_c")
REAL_ADD_WATCH = inotify_c.inotify_add_watch


def failing_for(word: str) -> Callable[[int, bytes, int], int]:
    """The kernel's inotify_add_watch, out of watches for every path containing *word*."""
    def add_watch(fd: int, path: bytes, mask: int) -> int:
        if word.encode() in path:
            ctypes.set_errno(errno.ENOSPC)
            return -1
        return REAL_ADD_WATCH(fd, path, mask)
    return add_watch


def test_a_directory_that_cannot_be_watched_at_start_means_polling_said_at_once(
        tmp_path: Path) -> None:
    rd = make_run(tmp_path)
    source = WatchdogSource(str(tmp_path), add_watch=failing_for("design"), poll_interval=0.1)
    source.start()
    try:
        assert source.mode == "polling"
        assert source.note is not None and "out of inotify watches" in source.note
        assert "design" in source.note and "polling" in source.note
        (rd / "x.md").write_text("x")
        events = wait_for(lambda: [e for e in source.get(0.2) if e.path.endswith("x.md")],
                          "the polling observer to see a new file")
        assert events
    finally:
        source.stop()
    assert inotify_c.inotify_add_watch is REAL_ADD_WATCH  # the seam is undone


def test_a_watch_failure_raised_in_a_type_of_watchdogs_own_still_names_the_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """watchdog has reported a failed watch by swallowing it (< 7.1) and by raising
    OSError (7.1); whatever it raises, the fallback names the directory from the seam."""
    owner = next((c for c in vars(inotify_c).values()
                  if isinstance(c, type) and "_raise_error" in vars(c)), None)
    if owner is None:
        pytest.skip("this watchdog has no _raise_error to replace")

    class Refused(Exception):
        pass

    def raise_its_own(*args: object, **kwargs: object) -> None:
        raise Refused("could not add a watch")

    monkeypatch.setattr(owner, "_raise_error", staticmethod(raise_its_own))
    make_run(tmp_path)
    source = WatchdogSource(str(tmp_path), add_watch=failing_for("design"), poll_interval=0.1)
    source.start()
    try:
        assert source.mode == "polling"
        assert source.note is not None and "out of inotify watches" in source.note
        assert "design" in source.note
    finally:
        source.stop()


def test_an_unrelated_start_failure_is_not_taken_for_a_watch_limit(tmp_path: Path) -> None:
    """Only a limit falls back to polling: a root that does not exist is still an error."""
    source = WatchdogSource(str(tmp_path / "absent"), poll_interval=0.1)
    with pytest.raises(OSError):
        source.start()
    source.stop()


def test_a_new_directory_that_cannot_be_watched_switches_to_polling_mid_run(
        tmp_path: Path) -> None:
    make_run(tmp_path)
    source = WatchdogSource(str(tmp_path), add_watch=failing_for("round-02"),
                            poll_interval=0.1)
    source.start()
    try:
        assert source.mode == "inotify" and source.note is None
        (tmp_path / "run" / "reviews" / "design" / "round-02").mkdir()
        got: list = []
        wait_for(lambda: got.extend(source.get(0.2)) or
                 any(e.kind is EventKind.MODE for e in got), "the MODE event")
        assert source.mode == "polling"
        mode = next(e for e in got if e.kind is EventKind.MODE)
        assert "out of inotify watches" in mode.detail and "round-02" in mode.detail
    finally:
        source.stop()


def test_out_of_watches_mid_run_a_new_round_is_judged_without_waiting_for_the_rescan(
        tmp_path: Path) -> None:
    make_run(tmp_path)
    err: list[str] = []
    source = WatchdogSource(str(tmp_path), add_watch=failing_for("round-02"),
                            poll_interval=0.1)
    w = Watcher(str(tmp_path), Overrides(), source,
                Options(settle=0.3, rescan=3600.0, fmt="json"), out=lambda s: None,
                err=err.append)
    codes: list[int] = []
    thread = threading.Thread(target=lambda: codes.append(w.run()), daemon=True)
    thread.start()
    try:
        wait_for(lambda: any("watching" in x for x in err), "the watcher to be ready")
        assert any("(inotify)" in x for x in err)
        rd2 = tmp_path / "run" / "reviews" / "design" / "round-02"
        rd2.mkdir()
        status = rd2.parent / "round-02-guard.json"

        def halts() -> set[str]:
            try:
                doc = json.loads(status.read_text())
            except (OSError, ValueError):
                return set()
            return {h["cause"] for h in doc["halts"]}

        # tracked and settled (nobody wrote: expected_tag_no_output), so from now on only
        # an event from inside round-02 -- which needs a watch on it -- tells of a file
        wait_for(lambda: "expected_tag_no_output" in halts(), "round-02 to settle")
        (rd2 / "quality-claude.finding-F01.md").write_text(finding(ct="corectness", r=2))
        wait_for(lambda: "change_type_out_of_enum" in halts(),
                 "round-02's new halt long before the 3600 s rescan")
        assert any("falling back to polling" in x for x in err)
        assert source.mode == "polling"
    finally:
        w.stop()
        thread.join(30)
    assert codes == [0]
