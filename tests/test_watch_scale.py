"""watch's start-up scan and publishing are linear in a run's rounds (issue 24): the
operations counted here (listings of the step directory, sibling comparisons) must not
grow with the square of the rounds. The timing is a benchmark
(benchmarks/watch_scale.py), never asserted here."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from qrspi_guard.contract.runconfig import Overrides
from qrspi_guard.engine import sides
from qrspi_guard.watch import registry
from qrspi_guard.watch.events import ScriptedSource
from qrspi_guard.watch.loop import Options, Watcher
from tests.support import load_benchmark


def _scan(root: Path, n: int, monkeypatch: pytest.MonkeyPatch) -> tuple[int, int]:
    """(step listings, Tracked.number reads) for a first scan of *n* rounds."""
    load_benchmark("watch_scale").build(root, n)
    listings, numbers = [0], [0]
    real_list = sides._list
    real_number = registry.Tracked.number

    def counted_list(step_dir: str) -> dict[int, frozenset[str]]:
        listings[0] += 1
        return real_list(step_dir)

    def counted_number(self: registry.Tracked) -> int:
        numbers[0] += 1
        return real_number.fget(self)  # type: ignore[attr-defined,no-any-return]

    monkeypatch.setattr(sides, "_list", counted_list)
    monkeypatch.setattr(registry.Tracked, "number", property(counted_number))
    lines: list[str] = []
    w = Watcher(str(root), Overrides(), ScriptedSource(), Options(settle=2.0, rescan=3600.0),
                out=lines.append, err=lambda s: None, clock=time.monotonic, wall=time.time)
    w.discover()
    w.tick()
    assert w.status_writes == n and len(lines) == n
    monkeypatch.undo()
    return listings[0], numbers[0]


def test_a_first_scan_lists_the_step_directory_a_constant_number_of_times(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    small = _scan(tmp_path / "small", 20, monkeypatch)
    large = _scan(tmp_path / "large", 80, monkeypatch)
    assert large[0] == small[0] <= 2  # once per step directory, not once per round
    assert large[1] <= 4 * small[1] * 1.5  # sibling comparisons linear in the rounds
