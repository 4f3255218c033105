"""The worker pool's two implementations behind one seam (``engine.parallel``): the
standard library's (``QRSPI_GUARD_POOL=stdlib``) gives the serial result, and a share
whose worker fails is done by the caller, as the forked one does."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from qrspi_guard import engine
from qrspi_guard.engine import parallel
from qrspi_guard.output import ReportOptions, renderer
from tests.test_equivalence import write_mutated_tree


def _json(paths: list[str]) -> str:
    return renderer("json")(engine.check_paths(paths), ReportOptions())


def test_the_stdlib_pool_gives_the_serial_result(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    write_mutated_tree(tmp_path, 7)
    monkeypatch.setenv("QRSPI_GUARD_JOBS", "1")
    serial = _json([str(tmp_path)])
    monkeypatch.setenv("QRSPI_GUARD_POOL", "stdlib")
    for n in ("2", "3"):
        monkeypatch.setenv("QRSPI_GUARD_JOBS", n)
        assert _json([str(tmp_path)]) == serial


def test_a_stdlib_share_whose_worker_dies_is_done_by_the_caller(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_mutated_tree(tmp_path, 8)
    monkeypatch.setenv("QRSPI_GUARD_JOBS", "1")
    serial = _json([str(tmp_path)])
    monkeypatch.setenv("QRSPI_GUARD_JOBS", "2")
    monkeypatch.setenv("QRSPI_GUARD_POOL", "stdlib")
    real = parallel._share

    def dies(w: int, n: int, count: int) -> list[tuple[int, object]]:
        os._exit(1)
        return real(w, n, count)  # pragma: no cover

    monkeypatch.setattr(parallel, "_share", dies)
    assert _json([str(tmp_path)]) == serial
