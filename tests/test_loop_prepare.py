"""`qrspi-guard prepare`: loop.md's `prepare` section, sentence by sentence, in real git
repositories made in tmp_path.

Layout as upstream's: a task directory holding the bookkeeping (`round-NN-commit.txt`,
`round-NN-scope-set.txt`, `round-NN-backward-loop.flag`) and the rounds `round-NN/`
(OUTPUT_DIR). In-process runs (`run_main`) unless a process matters: kills
(`QRSPI_GUARD_WRITE_FAULT`, the write seam of qrspi_guard/output/files.py) and the lock.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from tests.support import SCRIPT, run_cli, run_main

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

ZERO2 = "0" * 39 + "2"


class Repo:
    """A git work tree with commits (``base`` and ``head``: the fixture's two)."""

    base = ""
    head = ""

    def __init__(self, top: Path, branch: str = "main") -> None:
        self.top = top
        top.mkdir(parents=True)
        self.git("init", "-q", "-b", branch)
        self.git("config", "user.email", "t@example.test")
        self.git("config", "user.name", "Tester")

    def git(self, *args: str) -> str:
        return self.git_bytes(*args).decode().strip()

    def git_bytes(self, *args: str) -> bytes:
        return subprocess.run(["git", "-C", str(self.top), *args], check=True,
                              capture_output=True).stdout

    def commit(self, name: str, data: bytes, message: str = "c") -> str:
        (self.top / name).write_bytes(data)
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message)
        return self.git("rev-parse", "HEAD")


class Task:
    """The per-task directory beside the rounds."""

    def __init__(self, top: Path) -> None:
        self.top = top
        top.mkdir(parents=True)

    def round(self, n: int) -> Path:
        d = self.top / f"round-{n:02d}"
        d.mkdir(exist_ok=True)
        return d

    def anchor(self, n: int, text: str | bytes) -> Path:
        p = self.top / f"round-{n:02d}-commit.txt"
        p.write_bytes(text if isinstance(text, bytes) else f"{text}\n".encode())
        return p

    def scope(self, n: int, text: str) -> Path:
        p = self.top / f"round-{n:02d}-scope-set.txt"
        p.write_text(text)
        return p

    def sidecar(self, n: int) -> dict[str, object]:
        doc: dict[str, object] = json.loads((self.round(n) / ".round-prepare.json").read_text())
        return doc


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    r = Repo(tmp_path / "repo")
    r.base = r.commit("file.txt", b"v1\n", "initial")
    r.head = r.commit("file.txt", b"v2\n", "second")
    return r


@pytest.fixture
def task(tmp_path: Path) -> Task:
    return Task(tmp_path / "task")


def prep(repo: Repo | Path, *args: str, env: dict[str, str | None] | None = None
         ) -> subprocess.CompletedProcess[bytes]:
    cwd = repo.top if isinstance(repo, Repo) else repo
    return run_main("prepare", *args, cwd=cwd, env=env)


def per_task(repo: Repo, sha: str, *extra: str) -> tuple[str, ...]:
    return ("--task-branch", "main", "--implementer-commit", sha,
            "--worktree", str(repo.top), *extra)


def one_line_error(proc: subprocess.CompletedProcess[bytes]) -> str:
    err = proc.stderr.decode()
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


# -- the checks, their order and their exit codes ---------------------------------------


@pytest.mark.parametrize("flags", [("--task-branch", "foo"), ("--implementer-commit", "abc")])
def test_one_per_task_flag_without_the_other_is_exit_10(repo: Repo, task: Task,
                                                        flags: tuple[str, str]) -> None:
    proc = prep(repo, "1", str(task.round(1)), *flags, "--base-ref", repo.base)
    assert proc.returncode == 10
    err = one_line_error(proc)
    assert "orchestrator bug" in err and "--implementer-commit" in err
    assert list(task.round(1).iterdir()) == []


def test_round_1_commit_equal_to_the_task_base_is_exit_12(repo: Repo, task: Task) -> None:
    repo.git("reset", "-q", "--hard", repo.base)
    proc = prep(repo, "1", str(task.round(1)), *per_task(repo, repo.base,
                                                         "--base-ref", repo.base))
    assert proc.returncode == 12
    err = one_line_error(proc)
    assert "re-dispatch the implementer" in err and "task base commit" in err
    assert not (task.top / "round-01-commit.txt").exists()


def test_a_later_round_commit_equal_to_the_prior_anchor_is_exit_12(repo: Repo,
                                                                   task: Task) -> None:
    task.anchor(1, repo.head)
    proc = prep(repo, "2", str(task.round(2)), *per_task(repo, repo.head))
    assert proc.returncode == 12
    assert "prior round anchor (round 1)" in one_line_error(proc)


def test_the_advance_check_comes_before_the_anchor_shape_check(repo: Repo,
                                                               task: Task) -> None:
    task.anchor(1, f"  {repo.head}  \n".encode())
    proc = prep(repo, "2", str(task.round(2)), *per_task(repo, repo.head))
    assert proc.returncode == 12


def test_a_commit_that_is_not_the_worktrees_head_is_exit_11(repo: Repo, task: Task) -> None:
    bogus = "0" * 39 + "1"
    proc = prep(repo, "1", str(task.round(1)), *per_task(repo, bogus, "--base-ref",
                                                         repo.base))
    assert proc.returncode == 11
    err = one_line_error(proc)
    assert "HALT" in err and bogus in err and repo.head in err


def test_a_missing_prior_anchor_is_exit_1_and_leaves_no_anchor(repo: Repo,
                                                                task: Task) -> None:
    proc = prep(repo, "2", str(task.round(2)), *per_task(repo, repo.head))
    assert proc.returncode == 1
    assert "missing prior-round commit anchor" in one_line_error(proc)
    assert not (task.top / "round-02-commit.txt").exists()
    assert list(task.round(2).iterdir()) == []


@pytest.mark.parametrize("text", [b"not-a-sha\n", b"A" * 40 + b"\n", b"a" * 40,
                                  b"a" * 40 + b"\r\n", b"", b"a" * 39 + b"\n"])
def test_a_malformed_prior_anchor_is_exit_1(repo: Repo, task: Task, text: bytes) -> None:
    task.anchor(1, text)
    proc = prep(repo, "2", str(task.round(2)), "--base-ref", repo.base)
    assert proc.returncode == 1
    assert "malformed prior-round commit anchor" in one_line_error(proc)
    assert list(task.round(2).iterdir()) == []


def test_an_anchor_with_a_second_newline_is_read_as_round_prepare_reads_it(
        repo: Repo, task: Task) -> None:
    task.anchor(1, f"{repo.base}\n\n".encode())
    assert prep(repo, "2", str(task.round(2)), "--base-ref", repo.base).returncode == 0


@pytest.mark.parametrize("kind", ["fifo", "directory"])
def test_a_prior_anchor_that_is_not_a_regular_file_is_missing(repo: Repo, task: Task,
                                                              kind: str) -> None:
    path = task.top / "round-01-commit.txt"
    os.mkfifo(path) if kind == "fifo" else path.mkdir()
    proc = prep(repo, "2", str(task.round(2)), "--base-ref", repo.base)
    assert proc.returncode == 1
    assert "missing prior-round commit anchor" in one_line_error(proc)


def test_a_well_formed_anchor_naming_no_commit_is_a_named_error(repo: Repo,
                                                                task: Task) -> None:
    task.anchor(1, ZERO2)
    proc = prep(repo, "2", str(task.round(2)), *per_task(repo, repo.head, "--base-ref",
                                                         repo.base))
    assert proc.returncode == 1
    err = one_line_error(proc)
    assert "round-01-commit.txt" in err and ZERO2 in err and "no commit in" in err
    assert not (task.top / "round-02-commit.txt").exists()
    assert list(task.round(2).iterdir()) == []


@pytest.mark.parametrize("scope,said", [
    (None, "missing prior-round scope-set"), ("", "empty prior-round scope-set"),
    ("# generated_by: tagger\n", "empty prior-round scope-set")])
def test_with_the_scope_tagger_on_round_3_needs_a_prior_scope_set_with_tags(
        repo: Repo, task: Task, scope: str | None, said: str) -> None:
    task.anchor(1, repo.base)
    task.anchor(2, repo.base)
    if scope is not None:
        task.scope(2, scope)
    proc = prep(repo, "3", str(task.round(3)), *per_task(repo, repo.head, "--base-ref",
                                                         repo.base),
                env={"QRSPI_SCOPE_TAGGER_ENABLED": "true"})
    assert proc.returncode == 1
    assert said in one_line_error(proc)
    assert not (task.top / "round-03-commit.txt").exists()


@pytest.mark.parametrize("text", ["a\r\nb\r\n", " a\nb\n"])
def test_a_malformed_prior_scope_set_is_exit_1(repo: Repo, task: Task, text: str) -> None:
    task.anchor(2, repo.head)
    task.scope(1, "a\nb\n")
    task.scope(2, text)
    proc = prep(repo, "3", str(task.round(3)), "--base-ref", repo.base)
    assert proc.returncode == 1
    assert "malformed prior-round scope-set" in one_line_error(proc)


def test_outside_a_work_tree_is_exit_2_with_no_diff_and_no_hint(tmp_path: Path) -> None:
    out = tmp_path / "nongit" / "round-01"
    out.mkdir(parents=True)
    proc = prep(tmp_path / "nongit", "1", str(out), "--base-ref", "HEAD")
    assert proc.returncode == 2
    assert "not in a git work tree" in one_line_error(proc)
    assert not (out / "round-01.diff").exists()
    doc = json.loads((out / ".round-prepare.json").read_text())
    assert doc["diff_file"] is None and doc["scope_hint"] is None and doc["narrowed"] is False


def test_a_per_task_run_writes_the_anchor_after_every_check(repo: Repo, task: Task) -> None:
    proc = prep(repo, "1", str(task.round(1)), *per_task(repo, repo.head, "--base-ref",
                                                         repo.base))
    assert proc.returncode == 0, proc.stderr
    assert (task.top / "round-01-commit.txt").read_bytes() == f"{repo.head}\n".encode()
    assert proc.stdout == b""


# -- the backward-loop flag ------------------------------------------------------------


def converged(repo: Repo, task: Task) -> None:
    """Round 3 would narrow: equal sets, HEAD~1 is round 2's anchor."""
    repo.commit("file.txt", b"v3\n", "third")
    task.anchor(2, repo.head)
    task.anchor(1, repo.base)
    task.scope(1, "a\nb\n")
    task.scope(2, "a\nb\n")


def test_the_backward_loop_flag_forces_a_broaden_and_is_consumed_once(repo: Repo,
                                                                      task: Task) -> None:
    converged(repo, task)
    flag = task.top / "round-03-backward-loop.flag"
    flag.write_text("")
    assert prep(repo, "3", str(task.round(3)), "--base-ref", repo.base).returncode == 0
    assert not flag.exists()
    doc = task.sidecar(3)
    assert doc["narrowed"] is False and "backward-loop" in str(doc["reason"])
    assert prep(repo, "3", str(task.round(3)), "--base-ref", repo.base).returncode == 0
    assert task.sidecar(3)["narrowed"] is True  # consumed: the next run narrows


def test_a_flag_that_cannot_be_deleted_is_said_and_the_run_goes_on(repo: Repo,
                                                                    task: Task) -> None:
    converged(repo, task)
    flag = task.top / "round-03-backward-loop.flag"
    (flag / "inside").mkdir(parents=True)
    proc = prep(repo, "3", str(task.round(3)), "--base-ref", repo.base)
    assert proc.returncode == 0
    err = proc.stderr.decode()
    assert "failed to delete backward-loop flag" in err and str(flag) in err
    assert task.sidecar(3)["narrowed"] is False


# -- the narrowing decision ------------------------------------------------------------


@pytest.mark.parametrize("nn1,nn2,narrowed", [
    ("a\nb\n", "a\nb\n", True), ("a\n", "a\nb\n", True), ("a\nb\nc\n", "a\n", False),
    ("x\n", "a\n", False), ("a\nb\n", "b\nc\n", False), ("", "a\n", False),
    ("# total_findings_kept: 2\na\n", "# total_findings_kept: 5\na\n", True),
    ("a\n\nb\n", "b\na\n", True)])
def test_round_3_narrows_when_the_nn1_set_is_within_the_nn2_set(
        repo: Repo, task: Task, nn1: str, nn2: str, narrowed: bool) -> None:
    converged(repo, task)
    task.scope(2, nn1)
    task.scope(1, nn2)
    assert prep(repo, "3", str(task.round(3)), "--base-ref", repo.base).returncode == 0
    doc = task.sidecar(3)
    assert doc["narrowed"] is narrowed
    assert doc["scope_hint"] == (nn1.rstrip("\n") if narrowed else None)
    ref = "HEAD~1" if narrowed else repo.base
    assert doc["ref"] == ref
    assert (task.round(3) / "round-03.diff").read_bytes() == repo.git_bytes("diff", ref, "--")


def test_head_1_not_the_prior_anchor_broadens_with_the_reason(repo: Repo,
                                                              task: Task) -> None:
    converged(repo, task)
    task.anchor(2, repo.base)
    assert prep(repo, "3", str(task.round(3)), "--base-ref", repo.base).returncode == 0
    doc = task.sidecar(3)
    assert doc["narrowed"] is False and "HEAD~1" in str(doc["reason"])


@pytest.mark.parametrize("n", [1, 2])
def test_rounds_1_and_2_broaden(repo: Repo, task: Task, n: int) -> None:
    task.anchor(1, repo.base)
    assert prep(repo, str(n), str(task.round(n)), "--base-ref", repo.base).returncode == 0
    assert "narrowing requires NN>=3" in str(task.sidecar(n)["reason"])


# -- round-NN.diff and the byte-stable sidecar -----------------------------------------


def test_the_sidecar_bytes_are_upstreams_and_a_rerun_changes_nothing(repo: Repo,
                                                                    task: Task) -> None:
    out = task.round(1)
    assert prep(repo, "01", str(out), "--base-ref", repo.base).returncode == 0
    first = (out / ".round-prepare.json").read_bytes(), (out / "round-01.diff").read_bytes()
    diff_file = os.path.realpath(out / "round-01.diff")
    assert first[0] == (
        '{\n  "diff_file": ' + json.dumps(diff_file) + ',\n  "narrowed": false,\n'
        '  "reason": "round 1 uses base-branch broaden (narrowing requires NN>=3)",\n'
        f'  "ref": "{repo.base}",\n  "scope_hint": null\n}}\n').encode()
    assert prep(repo, "1", str(out), "--base-ref", repo.base).returncode == 0
    assert ((out / ".round-prepare.json").read_bytes(), (out / "round-01.diff").read_bytes()
            ) == first


def test_the_diff_is_gits_bytes_with_trailing_blank_lines_and_a_nul(repo: Repo,
                                                                    task: Task) -> None:
    (repo.top / ".gitattributes").write_text("data.txt diff\n")  # a text diff despite NUL
    repo.commit("data.txt", b"one\n", "data")
    (repo.top / "data.txt").write_bytes(b"one\nnul\x00here\n\n\n")
    assert prep(repo, "1", str(task.round(1)), "--base-ref", repo.base, "--artifact",
                "data.txt").returncode == 0
    got = (task.round(1) / "round-01.diff").read_bytes()
    assert got == repo.git_bytes("diff", repo.base, "--", "data.txt")
    assert b"+nul\x00here\n+\n+\n" in got and got.endswith(b"+\n+\n")


def test_artifact_limits_the_diff_to_its_path(repo: Repo, task: Task) -> None:
    repo.commit("other.txt", b"x\n", "other")
    assert prep(repo, "1", str(task.round(1)), "--base-ref", repo.base, "--artifact",
                "other.txt").returncode == 0
    got = (task.round(1) / "round-01.diff").read_bytes()
    assert b"other.txt" in got and b"file.txt" not in got


def test_without_base_ref_main_is_the_base(repo: Repo, task: Task) -> None:
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("file.txt", b"v3\n", "on feature")
    assert prep(repo, "1", str(task.round(1))).returncode == 0
    assert task.sidecar(1)["ref"] == "main"
    assert b"+v3" in (task.round(1) / "round-01.diff").read_bytes()


def test_an_unknown_base_ref_is_a_named_error_not_an_empty_diff(repo: Repo,
                                                                 task: Task) -> None:
    out = task.round(1)
    (out / "round-01.diff").write_bytes(b"old diff\n")
    (out / ".round-prepare.json").write_bytes(b"old sidecar\n")
    proc = prep(repo, "1", str(out), "--base-ref", "no-such-branch")
    assert proc.returncode == 1
    assert "unknown --base-ref no-such-branch" in one_line_error(proc)
    assert (out / "round-01.diff").read_bytes() == b"old diff\n"
    assert (out / ".round-prepare.json").read_bytes() == b"old sidecar\n"


def test_no_base_at_all_is_a_named_error(tmp_path: Path, task: Task) -> None:
    r = Repo(tmp_path / "lone", branch="master")
    r.commit("f", b"x\n")
    proc = prep(r, "1", str(task.round(1)))
    assert proc.returncode == 1
    assert "no base to diff against" in one_line_error(proc)


def test_a_failing_git_diff_is_named(repo: Repo, task: Task, tmp_path: Path) -> None:
    proc = prep(repo, "1", str(task.round(1)), "--base-ref", repo.base, "--artifact",
                str(tmp_path))  # outside the repository
    assert proc.returncode == 1
    assert "git diff" in one_line_error(proc)
    assert list(task.round(1).iterdir()) == []


# -- one repository per run ------------------------------------------------------------


def test_every_git_operation_runs_in_the_worktrees_repository(repo: Repo, task: Task,
                                                               tmp_path: Path) -> None:
    other = Repo(tmp_path / "other")
    other.commit("elsewhere.txt", b"1\n")
    other_head = other.commit("elsewhere.txt", b"2\n")
    proc = prep(repo, "1", str(task.round(1)), "--task-branch", "t", "--implementer-commit",
                other_head, "--worktree", str(other.top), "--base-ref", "HEAD~1")
    assert proc.returncode == 0, proc.stderr
    got = (task.round(1) / "round-01.diff").read_bytes()
    assert b"elsewhere.txt" in got and b"file.txt" not in got


def test_a_worktree_repository_works_from_a_directory_outside_git(repo: Repo, task: Task,
                                                                  tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    proc = prep(outside, "1", str(task.round(1)), *per_task(repo, repo.head, "--base-ref",
                                                            repo.base))
    assert proc.returncode == 0, proc.stderr


def test_a_worktree_outside_git_is_exit_2(repo: Repo, task: Task, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    proc = prep(repo, "1", str(task.round(1)), *per_task(repo, repo.head, "--worktree",
                                                         str(plain)))
    assert proc.returncode == 2
    assert not (task.top / "round-01-commit.txt").exists()


# -- old-or-new, in order: the diff, then the sidecar ------------------------------------


def fault(spec: str) -> dict[str, str]:
    return {"QRSPI_GUARD_WRITE_FAULT": spec}


def earlier_run(repo: Repo, task: Task) -> tuple[bytes, bytes]:
    """A round prepared against HEAD~1 (empty diff); then the work tree changes."""
    out = task.round(1)
    assert prep(repo, "1", str(out), "--base-ref", repo.head).returncode == 0
    (repo.top / "file.txt").write_bytes(b"v3\n")
    return (out / "round-01.diff").read_bytes(), (out / ".round-prepare.json").read_bytes()


def test_a_kill_between_the_diff_and_the_sidecar_leaves_the_diff_new_the_sidecar_old(
        repo: Repo, task: Task) -> None:
    old_diff, old_sidecar = earlier_run(repo, task)
    out = task.round(1)
    proc = run_cli("prepare", "1", str(out), "--base-ref", repo.base, cwd=repo.top,
                   env=fault("kill@rename:.round-prepare.json"))
    assert proc.returncode == -signal.SIGKILL
    assert (out / "round-01.diff").read_bytes() == repo.git_bytes("diff", repo.base, "--")
    assert (out / "round-01.diff").read_bytes() != old_diff
    assert (out / ".round-prepare.json").read_bytes() == old_sidecar
    assert prep(repo, "1", str(out), "--base-ref", repo.base).returncode == 0  # a rerun mends
    assert task.sidecar(1)["ref"] == repo.base


def test_a_kill_before_the_diffs_rename_leaves_both_old(repo: Repo, task: Task) -> None:
    old = earlier_run(repo, task)
    out = task.round(1)
    proc = run_cli("prepare", "1", str(out), "--base-ref", repo.base, cwd=repo.top,
                   env=fault("kill@rename:round-01.diff"))
    assert proc.returncode == -signal.SIGKILL
    assert ((out / "round-01.diff").read_bytes(),
            (out / ".round-prepare.json").read_bytes()) == old


@pytest.mark.parametrize("name", ["round-01.diff", ".round-prepare.json"])
def test_a_write_error_is_named_and_leaves_the_file_old_and_no_temp(
        repo: Repo, task: Task, name: str) -> None:
    old = earlier_run(repo, task)
    out = task.round(1)
    proc = run_cli("prepare", "1", str(out), "--base-ref", repo.base, cwd=repo.top,
                   env=fault(f"enospc@write:{name}"))
    assert proc.returncode == 1
    err = one_line_error(proc)
    assert f"cannot write {out / name}" in err and "No space left on device" in err
    assert (out / ".round-prepare.json").read_bytes() == old[1]
    assert sorted(p.name for p in out.iterdir()) == [".round-prepare.json", "round-01.diff"]


def test_the_anchor_is_written_before_the_diff(repo: Repo, task: Task) -> None:
    proc = run_cli("prepare", "1", str(task.round(1)),
                   *per_task(repo, repo.head, "--base-ref", repo.base), cwd=repo.top,
                   env=fault("kill@rename:round-01.diff"))
    assert proc.returncode == -signal.SIGKILL
    assert (task.top / "round-01-commit.txt").read_bytes() == f"{repo.head}\n".encode()


# -- the round lock --------------------------------------------------------------------


def hold_lock(directory: Path) -> int:
    fd = os.open(directory, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def test_a_run_that_finds_the_round_locked_gives_up_naming_the_lock(repo: Repo,
                                                                     task: Task) -> None:
    from qrspi_guard.engine.roundlock import LockTimeout
    from qrspi_guard.loop.prepare import prepare
    from qrspi_guard.loop.prepare_args import parse_args

    out = task.round(1)
    fd = hold_lock(out)
    said: list[str] = []
    try:
        with pytest.raises(LockTimeout) as caught:
            prepare(parse_args(["1", str(out), "--base-ref", repo.base]), cwd=str(repo.top),
                    say=said.append, lock_wait=0.05)
    finally:
        os.close(fd)
    assert caught.value.exit_code == 1 and "round lock" in str(caught.value)
    assert str(out) in str(caught.value)
    assert said and "waiting for another qrspi-guard run" in said[0]
    assert list(out.iterdir()) == []


def test_two_concurrent_runs_on_one_round_wait_their_turn(repo: Repo, task: Task) -> None:
    out = task.round(1)
    fd = hold_lock(out)
    procs = []
    try:
        for _ in range(2):
            procs.append(subprocess.Popen(
                [str(SCRIPT), "prepare", "1", str(out), "--base-ref", repo.base],
                cwd=repo.top, stdout=subprocess.PIPE, stderr=subprocess.PIPE))
        for p in procs:
            assert p.stderr is not None
            assert b"waiting for another qrspi-guard run" in p.stderr.readline()
        assert list(out.iterdir()) == []  # neither wrote while the lock was held
    finally:
        os.close(fd)
    for p in procs:
        assert p.wait(timeout=60) == 0
    assert (out / "round-01.diff").read_bytes() == repo.git_bytes("diff", repo.base, "--")
    assert task.sidecar(1)["ref"] == repo.base
    assert sorted(p.name for p in out.iterdir()) == [".round-prepare.json", "round-01.diff"]


# -- bad arguments: exit 1, one line, never a traceback --------------------------------


BAD = [
    [], ["1"], ["--task-branch", "foo", "bar"], ["1", "--output-dir", "foo"],
    ["-1", "OUT"], ["1", "OUT", "--bogus"], ["1", "OUT", "--base-ref"],
    ["1", "OUT", "--base-ref", "--show-toplevel"], ["1", "OUT", "--artifact", "--output=x"],
    ["1", "OUT", "--worktree", "-C"], ["1", "OUT", "--task-branch", "-x"],
    ["1", "OUT", "--implementer-commit", "--x"], ["1", "OUT", "--base-ref=main"],
    ["x", "OUT"], ["0", "OUT"], ["00", "OUT"], ["1" * 5000, "OUT"], ["\u0661", "OUT"],
    ["1.5", "OUT"], ["\x1b[31m", "OUT"], ["1", ""], ["1", "FILE"], ["1", "FILE/round-01"],
    ["1", "OUT", "--worktree", "/no/such/dir"], ["1", "OUT", "--worktree", "FILE"],
    ["1", "OUT", "--", "x"], ["1", "OUT", "extra"], ["1", "OUT", "-h"],
]


@pytest.mark.parametrize("argv", BAD, ids=lambda a: " ".join(a)[:40] or "none")
def test_a_bad_argument_is_exit_1_in_one_line_without_a_traceback(
        repo: Repo, tmp_path: Path, argv: list[str]) -> None:
    (tmp_path / "file").write_text("x")
    words = [w.replace("OUT", str(tmp_path / "t" / "round-01")).replace(
        "FILE", str(tmp_path / "file")) for w in argv]
    proc = prep(repo, *words)
    assert proc.returncode == 1
    err = one_line_error(proc)
    assert "\x1b" not in err and len(err) < 600
    assert not (tmp_path / "t").exists() or not any((tmp_path / "t").rglob("*.diff"))


def test_a_name_that_is_not_utf8_is_refused_in_one_line(repo: Repo) -> None:
    proc = run_cli("prepare", os.fsdecode(b"\xff\xfe"), "out", cwd=repo.top)
    assert proc.returncode == 1
    assert b"Traceback" not in proc.stderr and proc.stderr.count(b"\n") == 1


def test_help_is_printed_with_exit_0(repo: Repo) -> None:
    proc = prep(repo, "--help")
    assert proc.returncode == 0 and b"round-prepare.sh" in proc.stdout


def test_the_flags_may_come_in_any_order_and_verify_is_accepted(repo: Repo,
                                                                task: Task) -> None:
    proc = prep(repo, "1", str(task.round(1)), "--verify", "--implementer-commit", repo.head,
                "--base-ref", repo.base, "--worktree", str(repo.top), "--task-branch", "b")
    assert proc.returncode == 0, proc.stderr


def test_without_git_on_path_the_run_says_so_and_exits_1(repo: Repo, task: Task,
                                                         tmp_path: Path) -> None:
    empty = tmp_path / "empty-path"
    empty.mkdir()
    proc = run_cli("prepare", "1", str(task.round(1)), "--base-ref", "main", cwd=repo.top,
                   env={"PATH": str(empty)})
    assert proc.returncode == 1
    assert "git cannot be run" in one_line_error(proc)
    assert list(task.round(1).iterdir()) == []
