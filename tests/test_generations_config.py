"""generations.md §7: a round is judged with config.md as of its commit anchor.

Real git repositories in tmp_path; a logging `git` wrapper first on PATH counts the
calls the guard makes.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from tests.genkit import causes, check, finding_text, of, one, put
from tests.support import Run, run_main

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

Q, S = "quality-claude", "scope-claude"
CODEX = {"quality-codex", "scope-codex"}
OFF = "second_reviewer: false\nverifier_enabled: false\n"
ON = "second_reviewer: true\nverifier_enabled: false\n"


def git_env(home: Path) -> dict[str, str]:
    return {**os.environ, "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
            "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}


class Repo:
    """A git work tree holding one run under docs/qrspi/run."""

    def __init__(self, top: Path) -> None:
        self.top = top
        self.env = git_env(top.parent)
        top.mkdir(parents=True)
        self.git("init", "-q", "-b", "main")
        self.run = Run(top / "docs" / "qrspi" / "run")

    def git(self, *args: str, stdin: bytes | None = None) -> str:
        return subprocess.run(["git", "-C", str(self.top), *args], env=self.env, check=True,
                              capture_output=True, input=stdin).stdout.decode().strip()

    def commit(self, message: str = "c") -> str:
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD")

    def config(self, text: str) -> None:
        self.run.config(text)

    def clean_round(self, n: int, step: str = "design", anchor: str | None = None) -> Path:
        d = self.run.round_dir(step, n)
        for tag in (Q, S):
            self.run.clean(step, n, tag)
        if anchor is not None:
            self.run.write(f"reviews/{step}/round-{n:02d}-commit.txt", anchor + "\n")
        return d


def silent(result, n: int) -> set[str]:
    return {d.tag for d in of(result, "expected_tag_no_output") if d.round == n}


def sources(result) -> dict[int | None, str]:
    return {r.ref.round: r.config_source for r in result.rounds}


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return Repo(tmp_path / "repo")


def _two_eras(repo: Repo) -> tuple[str, str]:
    """Round 1 anchored at a commit whose config.md says second_reviewer: false; the
    working tree (and HEAD) say true; round 2 has no anchor."""
    repo.config(OFF)
    old = repo.commit("phase 1 config")
    repo.clean_round(1, anchor=old)
    repo.config(ON)
    new = repo.commit("phase 2 config")
    repo.clean_round(2)
    return old, new


def test_a_round_is_judged_with_config_md_as_of_its_commit(repo: Repo) -> None:
    old, _ = _two_eras(repo)
    result = check(repo.run.root)
    assert silent(result, 1) == set() and "unrouted_tag" not in causes(result)
    assert silent(result, 2) == CODEX
    assert sources(result) == {1: old, 2: "worktree"}
    r1 = next(r for r in result.rounds if r.ref.round == 1)
    assert r1.expected_tags == [Q, S]


def test_json_and_status_file_name_the_config_source(repo: Repo) -> None:
    old, _ = _two_eras(repo)
    proc = run_main("check", "--format", "json", "--write-status", str(repo.run.root),
                   env={"HOME": str(repo.top.parent)})
    doc = json.loads(proc.stdout)
    assert {r["round"]: r["config_source"] for r in doc["rounds"]} == {1: old, 2: "worktree"}
    steps = repo.run.root / "reviews" / "design"
    assert json.loads((steps / "round-01-guard.json").read_text())["config_source"] == old
    assert json.loads((steps / "round-02-guard.json").read_text())["config_source"] == \
        "worktree"


def test_a_round_checked_alone_is_still_judged_as_of_its_commit(repo: Repo) -> None:
    old, _ = _two_eras(repo)
    d = repo.run.root / "reviews/design/round-01"
    assert sources(check(d)) == {1: old} and silent(check(d), 1) == set()
    assert sources(check(d / f"{Q}.clean.md")) == {1: old}


def test_every_key_the_guard_reads_comes_from_the_commit(repo: Repo) -> None:
    repo.config("second_reviewer: false\nverifier_enabled: false\nroute: [design]\n")
    old = repo.commit()
    d = repo.clean_round(1, anchor=old)
    put(d, f"{Q}.finding-F01.md", finding_text(Q, 1, "scope"))
    (d / f"{Q}.clean.md").unlink()
    put(d, "kept-findings.txt", "")  # verified: sidecars required when the verifier is on
    repo.config("second_reviewer: false\nverifier_enabled: true\nroute: [goals]\n")
    repo.commit()
    anchored = check(repo.run.root)
    assert not {"sidecar_missing", "step_not_on_route"} & set(causes(anchored))
    (repo.run.root / "reviews/design/round-01-commit.txt").unlink()
    now = check(repo.run.root)
    assert {"sidecar_missing", "step_not_on_route"} <= set(causes(now))


def test_a_round_without_an_anchor_or_with_a_malformed_one_uses_the_working_tree(
        repo: Repo) -> None:
    old, _ = _two_eras(repo)
    repo.clean_round(3, anchor=old.upper())  # commit_anchor_malformed: not used
    result = check(repo.run.root)
    assert sources(result)[3] == "worktree" and silent(result, 3) == CODEX
    assert one(result, "commit_anchor_malformed").level == "error"


def test_a_short_sha_that_review_prep_accepts_is_resolved_by_git(repo: Repo) -> None:
    old, _ = _two_eras(repo)
    (repo.run.root / "reviews/design/round-01-commit.txt").write_text(old[:7] + "\n")
    result = check(repo.run.root)
    assert silent(result, 1) == set()
    assert one(result, "commit_anchor_malformed").level == "warning"


# -- fallbacks: the working tree, silently ------------------------------------------


def _assert_worktree(result, n: int = 1) -> None:
    assert sources(result)[n] == "worktree"
    assert silent(result, n) == CODEX
    assert not any(d.cause.startswith("config_") for d in result.diagnostics)


def test_without_git_on_path_the_working_tree_is_used(repo: Repo, tmp_path: Path) -> None:
    _two_eras(repo)
    empty = tmp_path / "nogit"
    empty.mkdir()
    proc = run_main("check", "--format", "json", str(repo.run.root),
                   env={"PATH": str(empty)})
    assert b"Traceback" not in proc.stderr and proc.stderr == b"", proc.stderr
    doc = json.loads(proc.stdout)
    assert [r["config_source"] for r in doc["rounds"]] == ["worktree", "worktree"]
    assert {d["tag"] for d in doc["diagnostics"]
            if d["cause"] == "expected_tag_no_output" and d["round"] == 1} == CODEX


def test_a_commit_not_in_the_repository_means_the_working_tree(repo: Repo) -> None:
    _two_eras(repo)
    (repo.run.root / "reviews/design/round-01-commit.txt").write_text("ab" * 20 + "\n")
    _assert_worktree(check(repo.run.root))


def test_a_repository_mid_rebase_means_the_working_tree(repo: Repo) -> None:
    _two_eras(repo)
    (repo.top / ".git" / "rebase-merge").mkdir()
    _assert_worktree(check(repo.run.root))


def test_config_md_absent_at_the_commit_means_the_working_tree(repo: Repo) -> None:
    put(repo.top, "README.md", "a repository before the run began\n")
    before = repo.commit("before the run")
    repo.config(ON)
    repo.commit()
    repo.clean_round(1, anchor=before)
    _assert_worktree(check(repo.run.root))


def test_config_md_absent_in_the_working_tree_but_present_at_the_commit_is_used(
        repo: Repo) -> None:
    repo.config(OFF)
    old = repo.commit()
    repo.clean_round(1, anchor=old)
    (repo.run.root / "config.md").unlink()
    result = check(repo.run.root)
    assert sources(result) == {1: old}
    assert "config_missing" not in causes(result) and silent(result, 1) == set()


def test_a_run_outside_any_git_work_tree_uses_its_working_tree(tmp_path: Path) -> None:
    run = Run(tmp_path / "plain").config(ON)
    for tag in (Q, S):
        run.clean("design", 1, tag)
    run.write("reviews/design/round-01-commit.txt", "ab" * 20 + "\n")
    result = check(run.root)
    assert sources(result) == {1: "worktree"} and silent(result, 1) == CODEX


def test_config_file_wins_over_the_commit(repo: Repo, tmp_path: Path) -> None:
    _two_eras(repo)
    other = put(tmp_path, "other-config.md", f"---\n{ON}---\n")
    result = check(repo.run.root, config_file=str(other))
    assert silent(result, 1) == CODEX
    assert set(sources(result).values()) == {"worktree"}


def test_command_line_switches_win_over_the_commit(repo: Repo) -> None:
    old, _ = _two_eras(repo)
    result = check(repo.run.root, second_reviewer=True)
    assert silent(result, 1) == CODEX
    assert sources(result)[1] == old


def test_config_diagnostics_are_reported_once_per_text_with_the_source(repo: Repo) -> None:
    repo.config("codex_reviews: false\nverifier_enabled: false\n")
    old = repo.commit()
    for n in (1, 2, 3):
        repo.clean_round(n, anchor=old)
    repo.config(OFF)
    repo.commit()
    repo.clean_round(4)
    result = check(repo.run.root)
    legacy = one(result, "config_legacy_key")
    assert old[:12] in legacy.message
    assert silent(result, 1) == set() and silent(result, 4) == set()


# -- git is asked once per run --------------------------------------------------------


def _git_wrapper(tmp_path: Path) -> tuple[Path, Path]:
    real = shutil.which("git")
    assert real is not None
    bindir = tmp_path / "bin"
    bindir.mkdir()
    log = tmp_path / "git-calls.log"
    wrapper = bindir / "git"
    wrapper.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log}"\nexec "{real}" "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return bindir, log


def _calls(log: Path, word: str) -> int:
    if not log.exists():
        return 0
    return sum(1 for line in log.read_text().splitlines() if f" {word}" in f" {line}")


def test_git_is_asked_with_one_rev_parse_and_one_cat_file_for_many_rounds(
        repo: Repo, tmp_path: Path) -> None:
    repo.config(OFF)
    first = repo.commit()
    repo.config("second_reviewer: false\nverifier_enabled: false\nroute: [design]\n")
    second = repo.commit()
    for n, sha in ((1, first), (2, first), (3, second), (4, second)):
        repo.clean_round(n, anchor=sha)
        repo.clean_round(n, step="goals", anchor=sha)
    repo.clean_round(5)
    bindir, log = _git_wrapper(tmp_path)
    proc = run_main("check", "--format", "json", str(repo.run.root),
                   env={"PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}"})
    doc = json.loads(proc.stdout)
    assert len(doc["rounds"]) == 9
    assert {r["config_source"] for r in doc["rounds"]} == {first, second, "worktree"}
    assert _calls(log, "rev-parse") == 1, log.read_text()
    # one streamed batch: each object's header first, a blob over the cap read past
    assert _calls(log, "cat-file") == 1, log.read_text()
    calls = log.read_text().splitlines()
    assert sum(c.endswith("cat-file --batch") for c in calls) == 1
    # and before each, the listing of the filter drivers to turn off (engine/git.py)
    assert _calls(log, "config") == 2 and len(calls) == 4


def test_no_git_call_is_made_when_no_round_has_an_anchor(repo: Repo, tmp_path: Path) -> None:
    repo.config(ON)
    repo.commit()
    repo.clean_round(1)
    bindir, log = _git_wrapper(tmp_path)
    run_main("check", str(repo.run.root),
            env={"PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}"})
    assert not log.exists() or log.read_text() == ""


def test_the_hook_never_calls_git(repo: Repo, tmp_path: Path) -> None:
    old, _ = _two_eras(repo)
    bindir, log = _git_wrapper(tmp_path)
    path = repo.run.root / "reviews/design/round-01" / f"{Q}.finding-F01.md"
    content = ("---\nfinding_id: R1-F01\nseverity: high\nchange_type: scope\n"
               "referenced_files: []\nartifact: design\nround: 1\nreviewer: quality-claude\n"
               "---\n\nThe design drops the retry path.\n")
    payload = {"session_id": "s", "cwd": str(repo.top), "hook_event_name": "PreToolUse",
               "tool_name": "Write", "tool_input": {"file_path": str(path),
                                                    "content": content}}
    proc = run_main("hook", "--event", "pre", input=json.dumps(payload).encode(),
                   env={"PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}"})
    assert proc.returncode in (0, 2), proc.stderr
    assert not log.exists() or log.read_text() == ""
    assert old  # the anchor is there, and still unread


def test_config_diagnostics_of_different_texts_are_each_reported_with_their_source(
        repo: Repo) -> None:
    repo.config("codex_reviews: false\nverifier_enabled: false\n")
    old = repo.commit()
    repo.clean_round(1, anchor=old)
    repo.config("codex_reviews: false\nverifier_enabled: false\npipeline: full\n")
    repo.commit()
    repo.clean_round(2)
    legacy = of(check(repo.run.root), "config_legacy_key")
    assert len(legacy) == 2
    assert sorted(old[:12] in d.message for d in legacy) == [False, True]


def test_a_task_rounds_anchor_chooses_its_config_too(repo: Repo) -> None:
    repo.config(OFF)
    old = repo.commit()
    d = repo.run.round_dir("tasks/task-01", 1)
    put(d, f"{Q}.finding-F01.md", finding_text(Q, 1, "scope", step="task-01"))
    put(d, "kept-findings.txt", "")
    repo.run.write("reviews/tasks/task-01/round-01-commit.txt", old + "\n")
    repo.config("second_reviewer: false\nverifier_enabled: true\n")
    repo.commit()
    result = check(repo.run.root)
    assert sources(result) == {1: old} and "sidecar_missing" not in causes(result)


def test_a_tree_at_config_md_in_one_commit_does_not_lose_another_rounds_commit(
        repo: Repo) -> None:
    folder = repo.run.root / "config.md"
    put(folder, "notes.txt", "---\nsecond_reviewer: true\n---\n" * 40)
    tree_commit = repo.commit("config.md was a folder")
    shutil.rmtree(folder)
    repo.config(OFF)
    good = repo.commit("b0")
    i = 0
    while good < tree_commit:  # the batch asks in SHA order: put the tree's answer first
        i += 1
        repo.git("commit", "-q", "--amend", "-m", f"b{i}")
        good = repo.git("rev-parse", "HEAD")
    repo.config(ON)
    repo.commit()
    repo.clean_round(1, anchor=tree_commit)
    repo.clean_round(2, anchor=good)
    result = check(repo.run.root)
    assert sources(result) == {1: "worktree", 2: good}
    assert silent(result, 2) == set()
