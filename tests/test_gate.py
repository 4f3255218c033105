"""`check` is a thin shell (issue 30): its options become one request, one call into the
gate judges, fixes, renders and writes, and what comes back is printed and is the exit
code. Statistics, status files and the step summary live in the layers that own them."""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

from qrspi_guard.gate import CheckRequest, Note, run
from qrspi_guard.output.statistics import render as statistics
from qrspi_guard.output.status import write_statuses
from qrspi_guard.settings import CommandLine
from tests.support import FIXTURES, REPO, run_main

#: what the check command may import of the package: its own helpers, the gate, and
#: what its option declarations name
SHELL_IMPORTS = {"qrspi_guard.cli.options", "qrspi_guard.cli.process", "qrspi_guard.gate",
                 "qrspi_guard.cli.conventions",
                 "qrspi_guard.output", "qrspi_guard.settings", "qrspi_guard.settings.declared",
                 "qrspi_guard.errors", "qrspi_guard.parse.capped"}


def test_the_check_command_reaches_the_core_only_through_the_gate() -> None:
    tree = ast.parse((REPO / "qrspi_guard" / "cli" / "check.py").read_text())
    imported = {node.module for node in ast.walk(tree)
                if isinstance(node, ast.ImportFrom) and node.module
                and node.module.startswith("qrspi_guard")}
    assert imported <= SHELL_IMPORTS, sorted(imported - SHELL_IMPORTS)
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)
             and isinstance(n.func, ast.Name) and n.func.id == "run"]
    assert len(calls) == 1  # one call into the core


def test_the_gate_gives_what_check_prints_without_any_command_line(tmp_path: Path) -> None:
    paths = (str(FIXTURES / "example"), str(FIXTURES / "example-fanin"))
    said: list[Note] = []
    for fmt in ("text", "json", "sarif", "junit"):
        got = run(CheckRequest(paths=paths, cli=CommandLine(format=fmt), started=0.0),
                  said.append)
        printed = run_main("check", "--format", fmt, *paths)
        if fmt != "junit":  # (JUnit carries the wall time)
            assert got.text.encode() == printed.stdout
        assert got.exit_code == printed.returncode == 1 and got.error is None
    assert said == []


def test_the_gate_says_what_check_says_on_stderr_as_notes(tmp_path: Path) -> None:
    said: list[Note] = []
    got = run(CheckRequest(paths=(str(tmp_path),)), said.append)
    assert got.exit_code == 0 and got.text.endswith("0 errors, 0 warnings\n")
    assert [n.level for n in said] == ["warning"]
    assert said[0].text.startswith("no review rounds found under ")


def test_statistics_are_an_output_of_their_own() -> None:
    result = __import__("qrspi_guard").check(str(FIXTURES / "example"))
    text = statistics(result, "text")
    assert text.splitlines()[0].split() == ["1", "change_type_out_of_enum", "error"]
    printed = run_main("check", "--statistics", str(FIXTURES / "example")).stdout.decode()
    assert text == printed


def test_status_files_that_cannot_be_written_come_back_as_data(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import errno
    import shutil

    from qrspi_guard import check
    from qrspi_guard.output import status

    work = tmp_path / "example"
    shutil.copytree(FIXTURES / "example", work)
    result = check(str(work))
    real = status.write_atomic

    def full_disk_for_round_02(path: str, data: bytes) -> None:
        if os.path.basename(path) == "round-02-guard.json":
            raise OSError(errno.ENOSPC, "No space left on device")
        real(path, data)

    monkeypatch.setattr(status, "write_atomic", full_disk_for_round_02)
    failed = write_statuses(result.rounds)
    assert [(os.path.basename(d), why) for d, why in failed] == [
        ("round-02", "No space left on device")]
    written = sorted(p.name for p in work.rglob("*-guard.json"))
    assert written == ["round-01-guard.json"] * (len(result.rounds) - 1)  # the others
