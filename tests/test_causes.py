"""Every cause of the catalogue has a fixture that triggers it, asserted by name."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from conftest import FIXTURES, REPO, run_cli

from qrspi_guard.causes import CATALOGUE

INDEX = json.loads((FIXTURES / "causes" / "index.json").read_text())
SPEC = REPO.parent / "shared" / "spec" / "round-contract.md"


def test_catalogue_matches_the_spec_table_exactly() -> None:
    if not SPEC.exists():
        pytest.skip("spec not beside the checkout")
    table = SPEC.read_text().split("## 10.")[1]
    names = set()
    for line in table.splitlines():
        if line.startswith("| `"):
            names.update(re.findall(r"`([a-z0-9_]+)`", line.split("|")[1]))
    assert names == set(CATALOGUE)


def test_every_cause_has_a_fixture() -> None:
    assert set(INDEX) == set(CATALOGUE)


@pytest.mark.parametrize("cause", sorted(c for c in INDEX if INDEX[c].get("command") != "split"))
def test_cause_fixture_triggers_its_cause(cause: str) -> None:
    entry = INDEX[cause]
    proc = run_cli("check", "--format", "json", *entry["args"], entry["path"], cwd=FIXTURES)
    assert proc.returncode in (0, 1), proc.stderr
    doc = json.loads(proc.stdout)
    causes = {d["cause"] for d in doc["diagnostics"]}
    assert cause in causes, f"{cause} not reported; got {sorted(causes)}"
    level = CATALOGUE[cause].level
    expected_exit = 1 if any(d["level"] == "error" for d in doc["diagnostics"]) else 0
    assert proc.returncode == expected_exit
    if level == "error" and cause != "sidecar_missing":
        assert proc.returncode == 1


def test_split_would_mix_attempts_fixture(tmp_path: Path) -> None:
    entry = INDEX["split_would_mix_attempts"]
    work = tmp_path / "fx"
    shutil.copytree(FIXTURES / entry["path"], work / entry["path"], symlinks=True)
    before = sorted(p.name for p in (work / entry["args"][1]).iterdir())
    proc = run_cli("split", *entry["args"], cwd=work)
    assert proc.returncode == 1
    assert b"split_would_mix_attempts" in proc.stderr
    assert sorted(p.name for p in (work / entry["args"][1]).iterdir()) == before


def test_valid_run_is_completely_clean() -> None:
    proc = run_cli("check", "--format", "json", "--strict", "valid", cwd=FIXTURES)
    doc = json.loads(proc.stdout)
    assert doc["diagnostics"] == []
    assert proc.returncode == 0
    assert doc["summary"]["rounds"] >= 5
    assert all(r["status"] == "ok" for r in doc["rounds"])


def test_example_run_reports_its_three_realistic_defects() -> None:
    proc = run_cli("check", "--format", "json", "example", cwd=FIXTURES)
    doc = json.loads(proc.stdout)
    got = sorted((d["cause"], Path(d["path"]).name) for d in doc["diagnostics"])
    assert got == [
        ("change_type_out_of_enum", "quality-claude.finding-F01.md"),
        ("expected_tag_no_output", "round-02"),
        ("missing_change_type", "quality-claude.finding-F02.md"),
    ]
    assert proc.returncode == 1
    by_round = {(r["step"], r["round"]): r["status"] for r in doc["rounds"]}
    assert by_round[("design", 2)] == "halt"
    assert by_round[("design", 1)] == "ok"
    assert by_round[("goals", 1)] == "ok"
