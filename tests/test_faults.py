"""The one grammar of the fault seams (qrspi_guard/faults.py), as both of its
environment variables spell it: split's (a file name after a space) and the output
writes' (after a colon)."""

from __future__ import annotations

import errno

import pytest

from qrspi_guard.faults import EnvFault, Fault, FaultSpecError
from qrspi_guard.output import files
from qrspi_guard.split import faults as split_faults


def _fired_at(fault: Fault | EnvFault, calls: list[tuple[str, str]]) -> list[tuple[int, int]]:
    out = []
    for i, (step, name) in enumerate(calls):
        try:
            fault(step, name)
        except OSError as exc:
            out.append((i, exc.errno or 0))
    return out


CALLS = [("create", "a.json"), ("rename", "a.json"), ("create", "b.json"),
         ("rename", "b.json"), ("rename", "b.json")]


@pytest.mark.parametrize("spec,sep,fired", [
    ("eio@rename:b.json", ":", [(3, errno.EIO)]),
    ("eio@rename b.json", " ", [(3, errno.EIO)]),
    ("ENOSPC @ rename", ":", [(1, errno.ENOSPC)]),
    ("erofs@3", ":", [(2, errno.EROFS)]),
    ("eacces@rename:", ":", [(1, errno.EACCES)]),
    ("eintr@rename:c.json", ":", []),
])
def test_one_grammar_names_the_step_the_file_or_the_count_and_fires_once(
        spec: str, sep: str, fired: list[tuple[int, int]]) -> None:
    assert _fired_at(Fault(spec, sep, "X"), CALLS) == fired


@pytest.mark.parametrize("spec", ["boom@1", "kill", "enospc@", "@3", "eio@ "])
def test_a_malformed_value_names_its_variable(spec: str) -> None:
    with pytest.raises(FaultSpecError, match="^QRSPI_X="):
        Fault(spec, ":", "QRSPI_X")


def test_the_environment_seam_reads_its_variable_at_each_step_and_fires_once_a_process(
        monkeypatch: pytest.MonkeyPatch) -> None:
    seam = EnvFault("QRSPI_TEST_FAULT", ":")
    monkeypatch.delenv("QRSPI_TEST_FAULT", raising=False)
    assert _fired_at(seam, CALLS) == []
    monkeypatch.setenv("QRSPI_TEST_FAULT", "eio@rename:b.json")
    assert _fired_at(seam, CALLS) == [(3, errno.EIO)]
    monkeypatch.setenv("QRSPI_TEST_FAULT", "enospc@create")
    assert _fired_at(seam, CALLS) == []


def test_a_malformed_environment_value_is_no_fault(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QRSPI_TEST_FAULT", "boom@rename")
    assert _fired_at(EnvFault("QRSPI_TEST_FAULT", ":"), CALLS) == []


def test_the_write_seam_matches_a_targets_base_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(files, "_SEAM", EnvFault(files.ENV, ":"))
    monkeypatch.setenv(files.ENV, "erofs@write:out.json")
    files.fault("write", "/some/dir/other.json")
    with pytest.raises(OSError) as got:
        files.fault("write", "/some/dir/out.json")
    assert got.value.errno == errno.EROFS
    files.fault("write", "/some/dir/out.json")  # once


def test_splits_seam_reports_a_malformed_value_as_a_usage_error_naming_its_variable() -> None:
    from qrspi_guard.split.errors import SplitUsageError

    with pytest.raises(SplitUsageError, match="^QRSPI_GUARD_SPLIT_FAULT='boom@1' is not "
                                              "ACTION@WHEN with ACTION one of eacces, eintr, "
                                              "eio, enospc, erofs, kill, stop$"):
        split_faults.parse("boom@1")
