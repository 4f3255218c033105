"""The four loop commands never write through a step, round or task directory under
`reviews/` that is a symbolic link (loop.md: "a step, round or task directory that is a
link is refused by name, never written through"; README "Writes anchored to
directories"), and a name holding a line break never reaches `kept-findings.txt`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.genkit import KEPT, fanin_round, new_run, put
from tests.support import run_main
from tests.test_loop_fanin import qc

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def tree(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*"))


def relink(real: Path, elsewhere: Path) -> Path:
    """Move the directory *real* to *elsewhere* and leave a link to it in its place."""
    elsewhere.parent.mkdir(parents=True, exist_ok=True)
    real.rename(elsewhere)
    real.symlink_to(elsewhere, target_is_directory=True)
    return elsewhere


@pytest.mark.parametrize("linked", ["step", "round"])
def test_fan_in_never_writes_through_a_linked_step_or_round_directory(
        tmp_path: Path, linked: str) -> None:
    rd = fanin_round(new_run(tmp_path), "design", 1, [("quality-claude", 1, "scope", 90)])
    real = rd.parent if linked == "step" else rd
    target = relink(real, tmp_path / "elsewhere" / real.name)
    before = tree(target)
    proc = run_main("fan-in", str(rd))
    assert proc.returncode == 2, proc.stderr
    assert b"a symbolic link stands there (never followed)" in proc.stderr
    assert tree(target) == before  # no audit, no kept list written through the link


@pytest.mark.parametrize("linked", ["step", "round"])
def test_await_never_writes_through_a_linked_step_or_round_directory(
        tmp_path: Path, linked: str) -> None:
    run = new_run(tmp_path)
    rd = run.round_dir("design", 1)
    rd.mkdir(parents=True, exist_ok=True)
    manifest = rd / ".dispatch-manifest.json"
    manifest.write_text(json.dumps([{"tag": "quality-claude", "mode": "first_party",
                                     "status": "done"}]))
    real = rd.parent if linked == "step" else rd
    target = relink(real, tmp_path / "elsewhere" / real.name)
    before = {p: p.read_bytes() for p in target.rglob("*") if p.is_file()}
    proc = run_main("await", "--round-dir", str(rd))
    assert proc.returncode == 1, proc.stderr
    assert b"a symbolic link stands there (never followed)" in proc.stderr
    assert {p: p.read_bytes() for p in target.rglob("*") if p.is_file()} == before


class Repo:
    def __init__(self, top: Path) -> None:
        self.top = top
        top.mkdir(parents=True)
        for args in (["init", "-q", "-b", "main"], ["config", "user.email", "t@e.test"],
                     ["config", "user.name", "t"]):
            self.git(*args)
        (top / "goals.md").write_text("# goals\nbase\n")
        self.git("add", "-A")
        self.git("commit", "-q", "-m", "base")
        (top / "goals.md").write_text("# goals\nbase\nround one\n")

    def git(self, *args: str) -> str:
        return subprocess.run(["git", "-C", str(self.top), *args], check=True,
                              capture_output=True, text=True).stdout.strip()


@pytest.mark.parametrize("linked", ["task", "round"])
def test_prepare_never_writes_through_a_linked_task_or_round_directory(
        tmp_path: Path, linked: str) -> None:
    repo = Repo(tmp_path / "repo")
    rd = repo.top / "reviews" / "tasks" / "task-01" / "round-01"
    rd.mkdir(parents=True)
    real = rd.parent if linked == "task" else rd
    target = relink(real, tmp_path / "elsewhere" / real.name)
    proc = run_main("prepare", "01", str(rd), "--base-ref", "main", cwd=repo.top)
    assert proc.returncode == 1, proc.stderr
    assert b"a symbolic link stands there (never followed)" in proc.stderr
    assert tree(target) == ([] if linked == "round" else ["round-01"])


@pytest.mark.parametrize("linked", ["reviews", "step"])
def test_review_prep_never_writes_through_a_linked_step_directory(
        tmp_path: Path, linked: str) -> None:
    repo = Repo(tmp_path / "repo")
    step = repo.top / "reviews" / "goals"
    step.mkdir(parents=True)
    real = step.parent if linked == "reviews" else step
    target = relink(real, tmp_path / "elsewhere" / real.name)
    proc = run_main("review-prep", "--step", "goals", "--round", "01", "--artifact-dir",
                    str(repo.top), "--base-ref", "main")
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.startswith(b"qrspi-guard review-prep: error: review-prep-write-failed:")
    assert b"a symbolic link stands there (never followed)" in proc.stderr
    assert tree(target) == ([] if linked == "step" else ["goals"])


# -- a line break never reaches kept-findings.txt ------------------------------------------

def test_a_finding_name_holding_a_line_break_halts_and_never_reaches_the_kept_list(
        tmp_path: Path) -> None:
    d = tmp_path / "round-NN"
    d.mkdir()
    qc(d, 1)
    broken = "qc.finding-F01.md\n.finding-F03"
    put(d, f"{broken}.md", (d / "qc.finding-F01.md").read_bytes())
    put(d, f"{broken}.score.md", "---\nscore: 95\n---\n\nWhy.\n")
    proc = run_main("fan-in", "--halt-on", "upstream", str(d))
    assert proc.returncode == 1, proc.stderr
    assert b"halt: bad_finding_filename" in proc.stderr
    assert not (d / KEPT).exists()
    halts = json.loads((d / ".verifier-fan-in-audit.json").read_text())["halts"]
    assert [h["cause"] for h in halts] == ["bad_finding_filename"]


def test_a_round_path_holding_a_line_break_writes_no_kept_list(tmp_path: Path) -> None:
    d = tmp_path / "evil\n" / "etc" / "passwd\n" / "round-NN"
    d.mkdir(parents=True)
    qc(d, 1)
    proc = run_main("fan-in", "--halt-on", "upstream", str(d))
    assert proc.returncode == 2, proc.stderr
    assert b"holds a line break" in proc.stderr and len(proc.stderr.splitlines()) == 1
    assert sorted(os.listdir(d)) == ["qc.finding-F01.md", "qc.finding-F01.score.md"]


# -- a step directory swapped for a link while the commands run ----------------------------

def test_fan_in_and_await_racing_a_step_directory_link_swap_never_write_outside(
        tmp_path: Path) -> None:
    from tests.test_hostile_links import _swapping

    rd = fanin_round(new_run(tmp_path), "design", 1, [("quality-claude", 1, "scope", 90)])
    (rd / ".dispatch-manifest.json").write_text(json.dumps(
        [{"tag": "quality-claude", "mode": "first_party", "status": "done"}]))
    outside = tmp_path / "outside"
    shutil.copytree(rd.parent, outside)  # a round the link leads to: a write would land
    before = {p: p.read_bytes() for p in outside.rglob("*") if p.is_file()}
    codes = set()
    with _swapping(rd.parent, outside) as swaps:
        for _ in range(30):
            codes.add(run_main("fan-in", str(rd)).returncode)
            codes.add(run_main("await", "--round-dir", str(rd)).returncode)
    assert {p: p.read_bytes() for p in outside.rglob("*") if p.is_file()} == before
    assert codes <= {0, 1, 2} and swaps[0] > 0
