"""git, wherever the guard runs it, runs none of the programs a repository's
configuration or attributes name (loop.md; qrspi_guard/engine/git.py): one test per
helper kind the loop commands can reach, each in a real repository whose helper would
touch a marker file. The diff's bytes stay git's own.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from qrspi_guard.engine.history import ConfigHistory
from tests.support import run_main

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e.test",
       "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e.test"}


class Hostile:
    """A repository with ``main`` (goals.md, file.txt) and a work-tree edit of both;
    :meth:`arm` names a helper that touches :attr:`marker` when it runs."""

    def __init__(self, tmp_path: Path) -> None:
        self.top = tmp_path / "repo"
        self.top.mkdir()
        self.home = tmp_path / "home"
        self.home.mkdir()
        self.marker = tmp_path / "helper-ran"
        self.env = {**os.environ, **ENV, "HOME": str(self.home)}
        self.git("init", "-q", "-b", "main")
        (self.top / "goals.md").write_text("# goals\nbase\n")
        (self.top / "file.txt").write_text("v1\n")
        self.git("add", "-A")
        self.git("commit", "-q", "-m", "base")
        self.base = self.git("rev-parse", "HEAD").decode().strip()
        self.helper = tmp_path / "helper.sh"
        self.helper.write_text(f'#!/bin/sh\ntouch "{self.marker}"\ncat "$@"\n')
        self.helper.chmod(0o755)

    def git(self, *args: str) -> bytes:
        return subprocess.run(["git", "-C", str(self.top), *args], env=self.env, check=True,
                              capture_output=True).stdout

    def arm(self, kind: str) -> None:
        h = str(self.helper)
        attributes = {"textconv": "diff=tc", "diff-command": "diff=dc", "clean": "filter=fl",
                      "process": "filter=pf", "required": "filter=rq"}
        config = {"fsmonitor": [("core.fsmonitor", h)],
                  "textconv": [("diff.tc.textconv", h)],
                  "diff-command": [("diff.dc.command", h)],
                  "external-diff": [("diff.external", h)],
                  "clean": [("filter.fl.clean", h)],
                  "process": [("filter.pf.process", h)],
                  "required": [("filter.rq.clean", h), ("filter.rq.required", "true")]}[kind]
        for key, value in config:
            self.git("config", key, value)
        if kind in attributes:
            (self.top / ".git" / "info" / "attributes").write_text(
                f"*.md {attributes[kind]}\n*.txt {attributes[kind]}\n")
        # the work tree differs from every commit: git must read the files
        (self.top / "goals.md").write_text("# goals\nbase\nedited in the work tree\n")
        (self.top / "file.txt").write_text("v2, edited\n")
        self.marker.unlink(missing_ok=True)


KINDS = ["fsmonitor", "textconv", "diff-command", "external-diff", "clean", "process",
         "required"]


@pytest.fixture
def repo(tmp_path: Path) -> Hostile:
    return Hostile(tmp_path)


@pytest.mark.parametrize("kind", KINDS)
def test_review_prep_runs_no_helper_program_the_repository_names(repo: Hostile,
                                                                  kind: str) -> None:
    repo.arm(kind)
    proc = run_main("review-prep", "--step", "goals", "--round", "01", "--artifact-dir",
                    str(repo.top), "--base-ref", "main", env={"HOME": str(repo.home), **ENV})
    assert proc.returncode == 0, proc.stderr
    assert not repo.marker.exists(), f"the {kind} helper ran"
    diff = (repo.top / "reviews" / "goals" / "round-01.diff").read_bytes()
    assert b"+edited in the work tree\n" in diff  # git's bytes, not a helper's


@pytest.mark.parametrize("kind", KINDS)
def test_prepare_runs_no_helper_program_the_repository_names(repo: Hostile,
                                                              kind: str) -> None:
    repo.arm(kind)
    out = repo.top / "reviews" / "tasks" / "task-01" / "round-01"
    proc = run_main("prepare", "01", str(out), "--base-ref", repo.base, cwd=repo.top,
                    env={"HOME": str(repo.home), **ENV})
    assert proc.returncode == 0, proc.stderr
    assert not repo.marker.exists(), f"the {kind} helper ran"
    assert b"+v2, edited\n" in (out / "round-01.diff").read_bytes()


def test_config_history_runs_no_helper_program_the_repository_names(repo: Hostile) -> None:
    for kind in KINDS:
        repo.arm(kind)
    (repo.top / "config.md").write_text("---\nsecond_reviewer: true\n---\n")
    repo.git("add", "config.md")
    repo.git("commit", "-q", "-m", "config")
    sha = repo.git("rev-parse", "HEAD").decode().strip()
    (repo.top / "config.md").write_text("---\nsecond_reviewer: false\n---\n")
    path = str(repo.top / "config.md")
    repo.marker.unlink(missing_ok=True)  # this test's own git ran them
    got = ConfigHistory().blobs([(path, sha)])
    assert got == {(path, sha): b"---\nsecond_reviewer: true\n---\n"}
    assert not repo.marker.exists()


def test_a_filter_driver_git_cannot_turn_off_is_refused_not_run(repo: Hostile) -> None:
    from qrspi_guard.engine import git

    repo.git("config", "filter.a=b.clean", str(repo.helper))
    (repo.top / ".git" / "info" / "attributes").write_text("*.md filter=a=b\n")
    got = git.run(["diff", "main", "--", "goals.md"], str(repo.top))
    assert not got.ok and "cannot be turned off" in got.reason()
    assert not repo.marker.exists()


def test_every_diff_gets_the_diff_helpers_turned_off(repo: Hostile) -> None:
    from qrspi_guard.engine import git

    cmd = git.command(["diff", "main"], str(repo.top))
    assert isinstance(cmd, git.Command)
    assert "--no-ext-diff" in cmd.argv and "--no-textconv" in cmd.argv
    assert cmd.argv.index("--no-textconv") > cmd.argv.index("diff")
