"""The pre-commit hook, run by the real `pre-commit try-repo` in a temporary git repo."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES, REPO

PRE_COMMIT = Path(sys.executable).parent / "pre-commit"


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
                   cwd=cwd, check=True, capture_output=True)


@pytest.mark.skipif(not PRE_COMMIT.exists(), reason="pre-commit not installed")
def test_pre_commit_try_repo_checks_touched_rounds_whole(tmp_path: Path) -> None:
    repo = tmp_path / "project"
    shutil.copytree(FIXTURES / "example", repo, symlinks=True)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache"), "NO_COLOR": "1"}
    run_dir = repo / "docs/qrspi/2026-05-17-auth-rework/reviews"

    def try_repo(*files: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(PRE_COMMIT), "try-repo", str(REPO), "qrspi-guard",
                               "--files", *files], cwd=repo, env=env, capture_output=True,
                              text=True, timeout=900)

    good = run_dir / "goals/round-01/quality-claude.finding-F01.md"
    proc = try_repo(str(good.relative_to(repo)))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Passed" in proc.stdout
    # one touched file of the broken round: the whole round is checked, silent
    # reviewer included
    bad_round = run_dir / "design/round-02"
    touched = bad_round / "quality-claude.finding-F01.md"
    proc = try_repo(str(touched.relative_to(repo)))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "change_type_out_of_enum" in proc.stdout
    assert "expected_tag_no_output" in proc.stdout
    assert "missing_change_type" in proc.stdout
    # files outside review rounds are not passed to the hook at all
    proc = try_repo(str((repo / "docs/qrspi/2026-05-17-auth-rework/config.md").relative_to(repo)))
    assert proc.returncode == 0
    assert "no files to check" in proc.stdout.lower() or "Skipped" in proc.stdout
