"""Every cause of the catalogue has a fixture that triggers it, asserted by name."""

from __future__ import annotations

import ctypes
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from qrspi_guard.contract.causes import CATALOGUE
from tests.support import FIXTURES, REPO, SCRIPT, run_main

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


@pytest.mark.parametrize("cause", sorted(c for c in INDEX if INDEX[c].get("command") != "split"
                                          and "setup" not in INDEX[c]))
def test_cause_fixture_triggers_its_cause(cause: str) -> None:
    entry = INDEX[cause]
    proc = run_main("check", "--format", "json", *entry["args"], entry["path"], cwd=FIXTURES)
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
    proc = run_main("split", *entry["args"], cwd=work)
    assert proc.returncode == 1
    assert b"split_would_mix_attempts" in proc.stderr
    assert sorted(p.name for p in (work / entry["args"][1]).iterdir()) == before


def test_valid_run_is_completely_clean() -> None:
    proc = run_main("check", "--format", "json", "--strict", "valid", cwd=FIXTURES)
    doc = json.loads(proc.stdout)
    assert doc["diagnostics"] == []
    assert proc.returncode == 0
    assert doc["summary"]["rounds"] >= 5
    assert all(r["status"] == "ok" for r in doc["rounds"])


def test_example_run_reports_its_three_realistic_defects() -> None:
    proc = run_main("check", "--format", "json", "example", cwd=FIXTURES)
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


# -- unreadable_dir: git cannot store an unlistable directory, so the test makes one ------

NOBODY = 65534
PR_CAPBSET_DROP = 24
CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH = 1, 2


def _as_nobody() -> None:
    os.setgid(NOBODY)
    os.setuid(NOBODY)


def _root_without_dac_override() -> None:
    """Stay root but drop the two capabilities that let root list a mode-000 directory,
    from the bounding set, so the exec'd script never gets them (Linux)."""
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH):
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")


def _runner() -> Callable[..., subprocess.CompletedProcess[bytes]] | None:
    """How to run the console script as a user for whom `chmod 000` bites: directly when
    not root; as root, as an unprivileged uid, or (when that uid cannot reach the
    interpreter, e.g. one installed under /root) as root without the DAC capabilities.
    None when no way can start the script."""
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "GITHUB_STEP_SUMMARY")}
    if os.geteuid() != 0:
        candidates: list[Callable[[], None] | None] = [None]
    elif sys.platform == "linux":
        candidates = [_as_nobody, _root_without_dac_override]
    else:
        candidates = [_as_nobody]
    for preexec in candidates:
        def run(*args: str, cwd: Path, preexec: Callable[[], None] | None = preexec
                ) -> subprocess.CompletedProcess[bytes]:
            return subprocess.run([str(SCRIPT), *args], cwd=cwd, env=env, preexec_fn=preexec,
                                  capture_output=True, timeout=60)
        try:
            if run("explain", "unreadable_dir", cwd=Path("/tmp")).returncode == 0:
                return run
        except (OSError, subprocess.SubprocessError):
            continue
    return None


@pytest.fixture
def unlistable_copy() -> Iterator[tuple[Path, Path]]:
    """The unreadable_dir fixture copied to a temp dir every user can traverse and read,
    and the directory the index names to make unlistable (the permissions are restored
    afterwards so the temp dir can be removed)."""
    entry = INDEX["unreadable_dir"]
    assert entry["setup"] == "unreadable"
    base = Path(tempfile.mkdtemp(dir="/tmp"))
    os.chmod(base, 0o755)
    art = base / "run"
    shutil.copytree(FIXTURES / entry["path"], art)
    for root, _dirs, files in os.walk(art):
        os.chmod(root, 0o755)
        for name in files:
            os.chmod(os.path.join(root, name), 0o644)
    target = art / entry["unlistable"]
    try:
        yield art, target
    finally:
        for root, dirs, _files in os.walk(base):  # top-down: children opened before descent
            for name in dirs:
                os.chmod(os.path.join(root, name), 0o755)
        shutil.rmtree(base)


def _check(run: Callable[..., subprocess.CompletedProcess[bytes]],
           art: Path) -> tuple[int, list[dict[str, str]]]:
    proc = run("check", "--format", "json", art.name, cwd=art.parent)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)["diagnostics"]


def test_unlistable_step_directory_inside_reviews_is_an_error(
        unlistable_copy: tuple[Path, Path]) -> None:
    run = _runner()
    if run is None:
        pytest.skip("cannot run the console script as a user that chmod 000 stops")
    art, target = unlistable_copy
    os.chmod(target, 0)
    code, diags = _check(run, art)
    found = [d for d in diags if d["cause"] == "unreadable_dir"]
    assert [(d["level"], Path(d["path"]).name) for d in found] == [("error", target.name)]
    assert code == 1


def test_the_same_unlistable_directory_outside_reviews_is_only_a_warning(
        unlistable_copy: tuple[Path, Path]) -> None:
    run = _runner()
    if run is None:
        pytest.skip("cannot run the console script as a user that chmod 000 stops")
    art, target = unlistable_copy
    outside = art / "drafts" / target.name
    outside.parent.mkdir(mode=0o755)
    target.rename(outside)
    os.chmod(outside, 0)
    code, diags = _check(run, art)
    assert [(d["cause"], d["level"], Path(d["path"]).name) for d in diags] == [
        ("unreadable_dir", "warning", target.name)]
    assert code == 0
