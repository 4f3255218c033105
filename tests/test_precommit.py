"""The pre-commit hook, run by the real `pre-commit try-repo` in a temporary git repo."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import FIXTURES, REPO, SCRIPT

PRE_COMMIT = Path(sys.executable).parent / "pre-commit"


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
                   cwd=cwd, check=True, capture_output=True)


@pytest.mark.slow
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


def _diagnostic_lines(text: str) -> list[str]:
    """The guard's own lines in pre-commit's output: diagnostics and the summary."""
    return sorted(ln for ln in text.splitlines()
                  if ": error " in ln or ": warning " in ln or ": info " in ln
                  or re.match(r"\d+ rounds?, \d+ files?: ", ln))


@pytest.mark.slow
@pytest.mark.skipif(not PRE_COMMIT.exists(), reason="pre-commit not installed")
def test_both_hooks_report_exactly_what_check_reports_on_the_example_run(
        tmp_path: Path) -> None:
    repo = tmp_path / "project"
    shutil.copytree(FIXTURES / "example", repo, symlinks=True)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_ACTIONS",)}
    env.update(PRE_COMMIT_HOME=str(tmp_path / "cache"), NO_COLOR="1")
    check = subprocess.run([str(SCRIPT), "check", "."], cwd=repo, env=env,
                           capture_output=True, text=True, timeout=120)
    assert check.returncode == 1
    expected = _diagnostic_lines(check.stdout)
    assert "4 rounds, 12 files: 3 errors, 0 warnings" in expected and len(expected) == 4
    for hook in ("qrspi-guard", "qrspi-guard-all"):
        proc = subprocess.run([str(PRE_COMMIT), "try-repo", str(REPO), hook, "--all-files",
                               "--verbose"], cwd=repo, env=env, capture_output=True,
                              text=True, timeout=900)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert _diagnostic_lines(proc.stdout) == expected, hook
        assert "telemetry" not in proc.stdout and "not in a review round" not in proc.stdout


@pytest.mark.slow
@pytest.mark.skipif(not PRE_COMMIT.exists(), reason="pre-commit not installed")
def test_the_whole_tree_hook_catches_a_commit_that_only_deletes_a_reviewers_output(
        tmp_path: Path) -> None:
    repo = tmp_path / "project"
    shutil.copytree(FIXTURES / "valid", repo, symlinks=True)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "reviews")
    (repo / "reviews/plan/round-01/spec-codex.clean.md").unlink()
    git(repo, "add", "-A")  # the commit only deletes a file: no file names to pass
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache"), "NO_COLOR": "1"}
    env.pop("GITHUB_ACTIONS", None)

    def try_repo(hook: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(PRE_COMMIT), "try-repo", str(REPO), hook], cwd=repo,
                              env=env, capture_output=True, text=True, timeout=900)

    assert try_repo("qrspi-guard").returncode == 0  # nothing staged to check
    proc = try_repo("qrspi-guard-all")
    assert proc.returncode == 1 and "expected_tag_no_output" in proc.stdout


def test_the_files_pattern_matches_exactly_what_the_tree_walk_treats_as_rounds() -> None:
    import yaml

    hooks = {h["id"]: h for h in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}
    files = re.compile(hooks["qrspi-guard"]["files"])
    yes = ["reviews/design/round-01/quality-claude.finding-F01.md",
           "a/b/reviews/integration-wave-23/round-01/x.md",
           "reviews/design/round-05-fanout/x.md", "reviews/tasks/task-03/round-01/q.md",
           "reviews/design/round-01-verified.md", "reviews/design/round-01.diff",
           "reviews/design/round-01-commit.txt"]
    no = ["reviews/telemetry/round-01/x.json", "reviews/ci/round-01/note.md",
          "node_modules/p/reviews/design/round-01/x.md",
          ".hidden/reviews/design/round-01/x.md", "reviews/tasks/round-01/q.md",
          "reviews/design/round-01/sub/x.md", "reviews/.cache/round-01/x.md",
          "config.md", "reviews/design/notes.md"]
    assert [f for f in yes if not files.search(f)] == []
    assert [f for f in no if files.search(f)] == []
    everything = hooks["qrspi-guard-all"]
    assert everything["always_run"] is True and everything["pass_filenames"] is False
