"""`qrspi-guard review-prep` (loop.md "review-prep"): the artifact step's round diff, in
real git repositories made in tmp_path.

In-process (:func:`run_main`) unless a process matters: the write-fault seam fires once
per process, and two concurrent runs are two processes (:func:`run_cli`).
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from qrspi_guard.engine.roundlock import LockTimeout, round_lock
from qrspi_guard.loop.absorption import absorption_map
from qrspi_guard.loop.reviewprep import Request, review_prep
from tests.support import SCRIPT, run_cli, run_main

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

DASH = "\u2014"
DESIGN = (f"# Design\n\n## G3 {DASH} Folded: absorbed by CD-2\n\n## G4 {DASH} Gone: moot\n\n"
          f"## G9 {DASH} Later:\n\nThe rest is deferred to v0.9 for now.\n")
STEPS = {"goals": "goals.md", "questions": "questions.md",
         "research": "research/summary.md", "design": "design.md",
         "phasing": "phasing.md", "plan": "plan.md", "structure": "structure.md",
         "parallelize": "parallelization.md", "replan": "plan.md"}


class Repo:
    """A work tree whose ``main`` holds every step's artifact and whose ``task`` branch
    (checked out) changes each of them."""

    def __init__(self, top: Path) -> None:
        self.top = top
        self.home = top.parent / "home"
        self.home.mkdir(exist_ok=True)
        self.env = {**os.environ, "HOME": str(self.home), "GIT_CONFIG_NOSYSTEM": "1",
                    "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
                    "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}

    def git(self, *args: str) -> bytes:
        return subprocess.run(["git", "-C", str(self.top), *args], env=self.env, check=True,
                              capture_output=True).stdout

    def put(self, rel: str, data: str | bytes) -> Path:
        path = self.top / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.encode() if isinstance(data, str) else data)
        return path

    def commit(self, message: str) -> str:
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.head()

    def head(self) -> str:
        return self.git("rev-parse", "HEAD").decode().strip()

    def reviews(self, step: str) -> Path:
        return self.top / "reviews" / step

    def anchor(self, step: str, round_no: int, text: str) -> Path:
        return self.put(f"reviews/{step}/round-{round_no:02d}-commit.txt", text)


def make_repo(tmp_path: Path) -> Repo:
    repo = Repo(tmp_path / "art")
    repo.top.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo.top)], env=repo.env,
                   check=True, capture_output=True)
    for rel in sorted(set(STEPS.values())):
        repo.put(rel, f"# {rel}\nBase body.\n")
    repo.put("design.md", "# Design\nBase design.\n")
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "task")
    for rel in sorted(set(STEPS.values())):
        repo.put(rel, f"# {rel}\nBase body.\nRound one line.\n")
    repo.put("design.md", DESIGN)
    repo.commit("round-1 work")
    return repo


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return make_repo(tmp_path)


def prep(where: Repo | Path, *args: str, env: dict[str, str | None] | None = None,
         ) -> subprocess.CompletedProcess[bytes]:
    """`review-prep ARGS` in-process; ``{D}`` in ARGS is the repository's top."""
    top = where.top if isinstance(where, Repo) else where
    home = {"HOME": str(where.home)} if isinstance(where, Repo) else {}
    return run_main("review-prep", *_with_dir(args, top), env={**home, **(env or {})})


def _with_dir(args: tuple[str, ...], top: Path) -> list[str]:
    return [a.replace("{D}", str(top)) for a in args]


def round1(repo: Repo, step: str = "goals", *extra: str) -> subprocess.CompletedProcess[bytes]:
    return prep(repo, "--step", step, "--round", "01", "--artifact-dir", "{D}",
                "--base-ref", "main", *extra)


def round_n(repo: Repo, n: str, step: str = "goals") -> subprocess.CompletedProcess[bytes]:
    return prep(repo, "--step", step, "--round", n, "--artifact-dir", "{D}",
                "--base-ref", "main")


def files_under(path: Path) -> list[str]:
    if not path.exists():
        return []
    return sorted(str(p.relative_to(path)) for p in path.rglob("*"))


def one_error_line(got: subprocess.CompletedProcess[bytes]) -> str:
    err = got.stderr.decode()
    assert "Traceback" not in err
    assert len(err.splitlines()) == 1, err
    return err


# -- the step-to-artifact table ---------------------------------------------------------


@pytest.mark.parametrize(("step", "artifact"), sorted(STEPS.items()))
def test_each_step_diffs_its_own_artifact(repo: Repo, step: str, artifact: str) -> None:
    got = round1(repo, step)
    assert got.returncode == 0, got.stderr
    assert got.stdout == b"" and got.stderr == b""
    diff = (repo.reviews(step) / "round-01.diff").read_bytes()
    assert diff == repo.git("diff", "main", "--", artifact)
    assert f"diff --git a/{artifact} b/{artifact}\n".encode() in diff
    others = {"round-01.diff", "round-01.absorption-map.tsv"} if step in ("design", "plan") \
        else {"round-01.diff"}
    assert set(files_under(repo.reviews(step))) == others


def test_implement_is_a_no_op(repo: Repo) -> None:
    got = round1(repo, "implement")
    assert (got.returncode, got.stdout, got.stderr) == (0, b"", b"")
    assert not (repo.top / "reviews").exists()


@pytest.mark.parametrize("step", ["bogus", "nope", "", "review"])
def test_an_unknown_step_exits_0_silently_and_creates_nothing(repo: Repo, step: str) -> None:
    if not step:  # an empty --step is a missing flag (exit 1), not an unknown step
        assert round1(repo, step).returncode == 1
        return
    got = round1(repo, step)
    assert (got.returncode, got.stdout, got.stderr) == (0, b"", b"")
    assert not (repo.top / "reviews").exists()


@pytest.mark.parametrize(("step", "meant"), [("desgin", "design"), ("Goals", "goals"),
                                             ("../goals", "goals"), ("goals/..", "goals"),
                                             ("parallelise", "parallelize")])
def test_a_near_miss_step_exits_0_with_one_did_you_mean_line_and_creates_nothing(
        repo: Repo, step: str, meant: str) -> None:
    """Upstream's silent exit 0 stays; a step difflib rates at 0.6 or more near a known
    one gets one line naming it (a typo must not pass in silence)."""
    got = round1(repo, step)
    assert (got.returncode, got.stdout) == (0, b"")
    assert got.stderr.decode() == (f"qrspi-guard review-prep: warning: unknown step "
                                   f"{step!r}; did you mean {meant!r}? (nothing written)\n")
    assert not (repo.top / "reviews").exists()


# -- the ref: --base-ref on round 1, the previous round's anchor afterwards --------------


def test_round_one_diffs_against_the_base_ref_and_needs_no_anchor(repo: Repo) -> None:
    got = round1(repo)
    assert got.returncode == 0 and b"anchor-file-missing" not in got.stderr
    assert (repo.reviews("goals") / "round-01.diff").read_bytes() == \
        repo.git("diff", "main", "--", "goals.md")


def test_round_one_without_a_base_ref_is_exit_1_naming_it(repo: Repo) -> None:
    got = prep(repo, "--step", "goals", "--round", "1", "--artifact-dir", "{D}")
    assert got.returncode == 1
    assert "--base-ref" in one_error_line(got)
    assert not (repo.top / "reviews").exists()


def test_a_later_round_diffs_against_the_previous_anchor_not_head_1_nor_base_ref(
        repo: Repo) -> None:
    anchor = repo.head()
    repo.anchor("goals", 1, anchor + "\n")
    repo.put("goals.md", "# goals.md\nBase body.\nRound one line.\nDecoy line.\n")
    repo.commit("decoy")
    repo.put("goals.md", "# goals.md\nBase body.\nRound one line.\nDecoy line.\nRound two.\n")
    repo.commit("round-2 work")
    got = round_n(repo, "02")
    assert got.returncode == 0, got.stderr
    diff = (repo.reviews("goals") / "round-02.diff").read_bytes()
    assert diff == repo.git("diff", anchor, "--", "goals.md")
    assert diff != repo.git("diff", "HEAD~1", "--", "goals.md")
    assert diff != repo.git("diff", "main", "--", "goals.md")


@pytest.mark.parametrize("shape", ["{sha}", "  {sha}  \n\n", "{short}\n", "\t{sha}\r\n"])
def test_the_anchor_is_read_white_space_stripped_7_to_64_hex(repo: Repo, shape: str) -> None:
    sha = repo.git("rev-parse", "main").decode().strip()
    repo.anchor("goals", 1, shape.format(sha=sha, short=sha[:7]))
    got = round_n(repo, "2")
    assert got.returncode == 0, got.stderr
    assert (repo.reviews("goals") / "round-02.diff").read_bytes() == \
        repo.git("diff", sha, "--", "goals.md")


@pytest.mark.parametrize(("given", "reads", "writes"), [
    ("2", "round-01-commit.txt", "round-02.diff"),
    ("007", "round-06-commit.txt", "round-07.diff"),
    ("100", "round-99-commit.txt", "round-100.diff"),
])
def test_the_round_number_names_both_files(repo: Repo, given: str, reads: str,
                                           writes: str) -> None:
    repo.put(f"reviews/goals/{reads}", repo.git("rev-parse", "main").decode())
    got = round_n(repo, given)
    assert got.returncode == 0, got.stderr
    assert (repo.reviews("goals") / writes).is_file()


@pytest.mark.parametrize("what", ["absent", "directory", "fifo"])
def test_a_missing_anchor_is_anchor_file_missing(repo: Repo, what: str) -> None:
    path = repo.reviews("goals") / "round-01-commit.txt"
    path.parent.mkdir(parents=True)
    if what == "directory":
        path.mkdir()
    elif what == "fifo":
        os.mkfifo(path)
    got = round_n(repo, "02")
    assert got.returncode == 1
    assert "anchor-file-missing:" in one_error_line(got)
    assert not (repo.reviews("goals") / "round-02.diff").exists()


# -- sha-format-invalid: before any git runs against the value --------------------------


def logging_git(tmp_path: Path) -> tuple[dict[str, str | None], Path]:
    """A `git` first on PATH that logs its arguments, then runs the real one."""
    real = shutil.which("git")
    assert real is not None
    bindir = tmp_path / "bin"
    bindir.mkdir()
    log = tmp_path / "git.log"
    wrapper = bindir / "git"
    wrapper.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log}"\nexec "{real}" "$@"\n')
    wrapper.chmod(0o755)
    return {"PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}"}, log


@pytest.mark.parametrize("content", [
    "DEADBEEFDEADBEEFDEADBEEFDEADBEEFDEADBEEF\n", "abc123\n", "z" * 40 + "\n",
    "a" * 65 + "\n", "", "\n", "deadbee f00\n".replace(" ", "-"), "--output=x\n",
])
def test_a_malformed_anchor_is_sha_format_invalid_and_runs_no_git_diff(
        repo: Repo, tmp_path: Path, content: str) -> None:
    repo.anchor("goals", 1, content)
    env, log = logging_git(tmp_path)
    got = prep(repo, "--step", "goals", "--round", "02", "--artifact-dir", "{D}",
               "--base-ref", "main", env=env)
    assert got.returncode == 1
    assert "sha-format-invalid:" in one_error_line(got)
    assert not (repo.reviews("goals") / "round-02.diff").exists()
    calls = log.read_text().splitlines() if log.exists() else []
    assert not [c for c in calls if c.startswith("diff")], calls


def test_an_anchor_with_a_terminal_escape_is_shown_escaped(repo: Repo) -> None:
    repo.anchor("goals", 1, "\x1b[31mred\x07\n")
    got = round_n(repo, "02")
    assert b"\x1b" not in got.stderr and b"\x07" not in got.stderr
    assert "sha-format-invalid:" in one_error_line(got)


# -- git's failures are named, never an empty diff --------------------------------------


def test_an_unknown_base_ref_is_review_prep_git_failed_not_an_empty_diff(repo: Repo) -> None:
    got = prep(repo, "--step", "goals", "--round", "01", "--artifact-dir", "{D}",
               "--base-ref", "no-such-branch")
    assert got.returncode == 1
    line = one_error_line(got)
    assert "review-prep-git-failed:" in line and "no-such-branch" in line
    assert "bad revision" in line  # git's own reason
    assert not (repo.top / "reviews").exists()


def test_a_named_failure_line_is_the_error_line_with_the_diagnostic_first(
        repo: Repo) -> None:
    got = prep(repo, "--step", "goals", "--round", "01", "--artifact-dir", "{D}",
               "--base-ref", "no-such-branch")
    assert one_error_line(got).startswith(
        "qrspi-guard review-prep: error: review-prep-git-failed: ")


def test_an_unknown_well_formed_anchor_is_git_failed_not_narrow_round_empty_diff(
        repo: Repo) -> None:
    repo.anchor("goals", 1, "0123456789abcdef0123456789abcdef01234567\n")
    got = round_n(repo, "02")
    assert got.returncode == 1
    line = one_error_line(got)
    assert "review-prep-git-failed:" in line
    assert "narrow-round-empty-diff" not in line
    assert not (repo.reviews("goals") / "round-02.diff").exists()


def test_git_that_cannot_start_is_review_prep_git_failed(repo: Repo, tmp_path: Path) -> None:
    empty = tmp_path / "nobin"
    empty.mkdir()
    got = prep(repo, "--step", "goals", "--round", "01", "--artifact-dir", "{D}",
               "--base-ref", "main", env={"PATH": str(empty)})
    assert got.returncode == 1
    assert "review-prep-git-failed:" in one_error_line(got)


# -- no hunk: round 1 writes nothing, later rounds are narrow-round-empty-diff ----------


def test_round_one_without_a_hunk_exits_0_and_writes_nothing(repo: Repo) -> None:
    got = prep(repo, "--step", "phasing", "--round", "01", "--artifact-dir", "{D}",
               "--base-ref", "HEAD")  # phasing.md as committed: no hunk
    assert (got.returncode, got.stderr) == (0, b"")
    assert not (repo.top / "reviews").exists()


def test_a_later_round_without_a_hunk_is_narrow_round_empty_diff(repo: Repo) -> None:
    repo.anchor("goals", 1, repo.head() + "\n")
    got = round_n(repo, "02")
    assert got.returncode == 1
    assert "narrow-round-empty-diff:" in one_error_line(got)
    assert not (repo.reviews("goals") / "round-02.diff").exists()


def test_a_binary_change_has_no_hunk(repo: Repo) -> None:
    repo.put("goals.md", b"\x00\x01binary\n")
    got = round1(repo)
    assert (got.returncode, got.stderr) == (0, b"")
    assert not (repo.reviews("goals") / "round-01.diff").exists()


# -- the diff is git's own bytes --------------------------------------------------------


def test_the_diff_keeps_trailing_blank_lines_and_nul_bytes(repo: Repo) -> None:
    repo.put(".gitattributes", "goals.md diff\n")  # a NUL still diffs as text
    repo.git("config", "diff.suppressBlankEmpty", "true")  # blank context: bare "\n"
    repo.put("goals.md", b"first\nsecond\x00half\n\n\n")
    repo.commit("goals with blank tail")
    repo.put("goals.md", b"FIRST\nsecond\x00half\n\n\n")
    got = prep(repo, "--step", "goals", "--round", "01", "--artifact-dir", "{D}",
               "--base-ref", "HEAD")
    assert got.returncode == 0, got.stderr
    diff = (repo.reviews("goals") / "round-01.diff").read_bytes()
    assert diff == repo.git("diff", "HEAD", "--", "goals.md")
    assert b"\x00" in diff and diff.endswith(b" second\x00half\n\n\n")


def test_the_diff_is_of_the_working_tree_against_the_ref(repo: Repo) -> None:
    repo.put("goals.md", "# goals.md\nBase body.\nUncommitted edit.\n")
    assert round1(repo).returncode == 0
    assert b"+Uncommitted edit." in (repo.reviews("goals") / "round-01.diff").read_bytes()


# -- the artifact directory -------------------------------------------------------------


def test_a_file_as_artifact_dir_is_corrupt_artifact_dir(tmp_path: Path) -> None:
    path = tmp_path / "not-a-dir"
    path.write_text("a file\n")
    got = prep(tmp_path, "--step", "goals", "--round", "01", "--artifact-dir", str(path),
               "--base-ref", "main")
    assert got.returncode == 1
    assert "review-prep-corrupt-artifact-dir:" in one_error_line(got)


def test_a_missing_artifact_dir_is_corrupt_artifact_dir_escaped(tmp_path: Path) -> None:
    path = tmp_path / "gone\x1b[2J"
    got = prep(tmp_path, "--step", "goals", "--round", "01", "--artifact-dir", str(path),
               "--base-ref", "main")
    assert got.returncode == 1
    assert "review-prep-corrupt-artifact-dir:" in one_error_line(got)
    assert b"\x1b" not in got.stderr


def test_outside_a_work_tree_it_exits_0_silently(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "goals.md").write_text("# goals\n")
    env = {"GIT_CEILING_DIRECTORIES": str(tmp_path)}
    got = prep(tmp_path, "--step", "goals", "--round", "02", "--artifact-dir", str(plain),
               env=env)
    assert (got.returncode, got.stdout, got.stderr) == (0, b"", b"")
    assert files_under(plain) == ["goals.md"]


def test_a_repository_without_a_commit_counts_as_outside(tmp_path: Path) -> None:
    """Upstream's suite, run as a user other than root, makes its "not a git work
    tree" directory inside a repository that `git init` just made."""
    top = tmp_path / "fresh"
    subprocess.run(["git", "init", "-q", str(top)], check=True, capture_output=True)
    art = top / "art"
    art.mkdir()
    (art / "goals.md").write_text("# goals\n")
    got = prep(tmp_path, "--step", "goals", "--round", "01", "--artifact-dir", str(art),
               "--base-ref", "main")
    assert (got.returncode, got.stderr) == (0, b"")
    assert files_under(art) == ["goals.md"]


def test_inside_the_git_directory_counts_as_outside(repo: Repo) -> None:
    got = prep(repo, "--step", "goals", "--round", "01", "--artifact-dir",
               str(repo.top / ".git"), "--base-ref", "main")
    assert (got.returncode, got.stderr) == (0, b"")
    assert not (repo.top / ".git" / "reviews").exists()


def test_an_artifact_dir_below_the_top_level_diffs_its_own_artifact(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    repo.put("docs/run/goals.md", "# nested\n")
    repo.commit("nested base")
    repo.put("docs/run/goals.md", "# nested\nmore\n")
    got = prep(repo, "--step", "goals", "--round", "01", "--artifact-dir",
               str(repo.top / "docs" / "run"), "--base-ref", "HEAD")
    assert got.returncode == 0, got.stderr
    diff = (repo.top / "docs/run/reviews/goals/round-01.diff").read_bytes()
    assert b"diff --git a/docs/run/goals.md b/docs/run/goals.md\n" in diff


# -- the absorption map (design and plan) -----------------------------------------------


@pytest.mark.parametrize("step", ["design", "plan"])
def test_design_and_plan_write_the_absorption_map_of_design_md(repo: Repo, step: str) -> None:
    assert round1(repo, step).returncode == 0
    tsv = (repo.reviews(step) / "round-01.absorption-map.tsv").read_bytes()
    assert tsv == b"G3\tCD-2\nG4\tno-task\nG9\tno-task\n"
    assert tsv == absorption_map((repo.top / "design.md").read_bytes())


def test_a_design_without_markers_gives_an_empty_map(repo: Repo) -> None:
    repo.put("design.md", "# Design\nNothing absorbed.\n")
    assert round1(repo, "design").returncode == 0
    assert (repo.reviews("design") / "round-01.absorption-map.tsv").read_bytes() == b""


@pytest.mark.parametrize("what", ["absent", "directory", "fifo"])
def test_plan_without_a_readable_design_md_writes_nothing(repo: Repo, what: str) -> None:
    (repo.top / "design.md").unlink()
    if what == "directory":
        (repo.top / "design.md").mkdir()
    elif what == "fifo":
        os.mkfifo(repo.top / "design.md")
    got = round1(repo, "plan")
    assert got.returncode == 1
    line = one_error_line(got)
    assert "review-prep-write-failed:" in line and "design.md" in line
    assert files_under(repo.reviews("plan")) == []


# -- writes: old-or-new, unique temp names, the diff removed when the map fails ---------


def test_a_directory_that_cannot_be_made_is_review_prep_write_failed(repo: Repo) -> None:
    repo.put("reviews", "a file where the reviews directory belongs\n")
    got = round1(repo)
    assert got.returncode == 1
    assert "review-prep-write-failed:" in one_error_line(got)


@pytest.mark.parametrize("fault", ["eacces@create:round-01.diff", "enospc@write:round-01.diff",
                                   "eio@rename:round-01.diff"])
def test_a_failed_diff_write_leaves_the_old_diff_and_no_temp(repo: Repo, fault: str) -> None:
    old = repo.put("reviews/goals/round-01.diff", "old diff\n")
    got = run_cli("review-prep", "--step", "goals", "--round", "01", "--artifact-dir",
                  str(repo.top), "--base-ref", "main",
                  env={"QRSPI_GUARD_WRITE_FAULT": fault, "HOME": str(repo.home)})
    assert got.returncode == 1
    assert "review-prep-write-failed:" in one_error_line(got)
    assert old.read_text() == "old diff\n"
    assert files_under(repo.reviews("goals")) == ["round-01.diff"]


def test_a_failed_map_write_removes_the_new_diff(repo: Repo) -> None:
    got = run_cli("review-prep", "--step", "design", "--round", "01", "--artifact-dir",
                  str(repo.top), "--base-ref", "main",
                  env={"QRSPI_GUARD_WRITE_FAULT": "eio@rename:round-01.absorption-map.tsv",
                       "HOME": str(repo.home)})
    assert got.returncode == 1
    line = one_error_line(got)
    assert "review-prep-write-failed:" in line and "round-01.diff removed" in line
    assert files_under(repo.reviews("design")) == []


def test_temp_names_are_unique_to_the_run(repo: Repo) -> None:
    """Upstream writes through a fixed `<final>.tmp`; another run's temp file of that
    name is left alone."""
    theirs = repo.put("reviews/design/round-01.diff.tmp", "another run's half write\n")
    mine = repo.put("reviews/design/round-01.absorption-map.tsv.tmp", "x\n")
    assert round1(repo, "design").returncode == 0
    assert theirs.read_text() == "another run's half write\n" and mine.read_text() == "x\n"
    assert files_under(repo.reviews("design")) == [
        "round-01.absorption-map.tsv", "round-01.absorption-map.tsv.tmp", "round-01.diff",
        "round-01.diff.tmp"]


def test_a_rerun_replaces_the_outputs(repo: Repo) -> None:
    repo.put("reviews/design/round-01.diff", "stale\n")
    repo.put("reviews/design/round-01.absorption-map.tsv", "G1\tno-task\n")
    assert round1(repo, "design").returncode == 0
    assert (repo.reviews("design") / "round-01.diff").read_bytes() == \
        repo.git("diff", "main", "--", "design.md")
    assert (repo.reviews("design") / "round-01.absorption-map.tsv").read_bytes() == \
        b"G3\tCD-2\nG4\tno-task\nG9\tno-task\n"


# -- the lock: the round's when the round exists, else the step directory's -------------


def request(repo: Repo, step: str = "goals") -> Request:
    return Request(step=step, round_no=1, artifact_dir=str(repo.top), base_ref="main")


def test_a_held_step_lock_makes_the_run_wait_then_fail_naming_the_lock(
        repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(repo.home))
    repo.reviews("goals").mkdir(parents=True)
    with round_lock(str(repo.reviews("goals"))):
        with pytest.raises(LockTimeout) as caught:
            review_prep(request(repo), lock_wait=0.2)
    assert caught.value.exit_code == 1
    assert str(repo.reviews("goals")) in str(caught.value)
    assert files_under(repo.reviews("goals")) == []  # no round directory made either


def test_an_existing_round_directory_is_the_lock(repo: Repo,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(repo.home))
    round_dir = repo.reviews("goals") / "round-01"
    round_dir.mkdir(parents=True)
    with round_lock(str(repo.reviews("goals"))):  # the step's lock does not hold it up
        assert review_prep(request(repo), lock_wait=0.2).written
    with round_lock(str(round_dir)):
        with pytest.raises(LockTimeout) as caught:
            review_prep(request(repo), lock_wait=0.2)
    assert str(round_dir) in str(caught.value)


def test_the_lock_is_taken_only_to_write(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(repo.home))
    repo.reviews("phasing").mkdir(parents=True)
    repo.put("phasing.md", "# phasing.md\nBase body.\n")  # no hunk against main
    with round_lock(str(repo.reviews("phasing"))):
        got = review_prep(request(repo, "phasing"), lock_wait=0.01)
    assert got.written == () and got.skipped


def test_the_round_directory_is_never_created(repo: Repo) -> None:
    assert round1(repo, "design").returncode == 0
    assert not (repo.reviews("design") / "round-01").exists()


def test_a_run_waiting_on_the_lock_writes_after_it_is_released(repo: Repo) -> None:
    step_dir = repo.reviews("goals")
    step_dir.mkdir(parents=True)
    env = {**os.environ, "HOME": str(repo.home)}
    args = [str(SCRIPT), "review-prep", "--step", "goals", "--round", "01", "--artifact-dir",
            str(repo.top), "--base-ref", "main"]
    with round_lock(str(step_dir)):
        proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        # while the lock is held nothing is written, however far the run has got
        assert files_under(step_dir) == []
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert (step_dir / "round-01.diff").read_bytes() == repo.git("diff", "main", "--",
                                                                  "goals.md")


def test_two_concurrent_runs_on_one_round_both_succeed_and_leave_no_temp(repo: Repo) -> None:
    env = {**os.environ, "HOME": str(repo.home)}
    args = [str(SCRIPT), "review-prep", "--step", "design", "--round", "01",
            "--artifact-dir", str(repo.top), "--base-ref", "main"]
    procs = [subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for _ in range(2)]
    for proc in procs:
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
    assert files_under(repo.reviews("design")) == ["round-01.absorption-map.tsv",
                                                   "round-01.diff"]
    assert (repo.reviews("design") / "round-01.diff").read_bytes() == \
        repo.git("diff", "main", "--", "design.md")


# -- arguments: upstream's forms, exit 1 with one line naming the argument --------------


GOOD = ["--step", "goals", "--round", "01", "--artifact-dir", "{D}", "--base-ref", "main"]


@pytest.mark.parametrize(("args", "named"), [
    ([], "--step"),
    (["--step"], "--step"),
    (["--bogus", "x"], "--bogus"),
    (["-x"], "-x"),
    (["goals"], "goals"),
    ([*GOOD, "--extra"], "--extra"),
    ([*GOOD, "--verbose=1"], "--verbose"),
    (["--step", "goals", "--artifact-dir", "{D}", "--base-ref", "main"], "--round"),
    (["--step", "goals", "--round", "1", "--base-ref", "main"], "--artifact-dir"),
    (["--round", "1", "--artifact-dir", "{D}"], "--step"),
    ([*GOOD[:3], "abc", *GOOD[4:]], "--round"),
    ([*GOOD[:3], "0", *GOOD[4:]], "--round"),
    ([*GOOD[:3], "-1", *GOOD[4:]], "--round"),
    ([*GOOD[:3], "1e3", *GOOD[4:]], "--round"),
    ([*GOOD[:3], " 1", *GOOD[4:]], "--round"),
    ([*GOOD[:3], "\uff11", *GOOD[4:]], "--round"),
    ([*GOOD[:3], "9" * 5000, *GOOD[4:]], "--round"),
    ([*GOOD[:7], "-x"], "--base-ref"),
    ([*GOOD[:7], "--help"], "--base-ref"),
    ([*GOOD[:6], "--base-ref=--output=/tmp/x"], "--base-ref"),
    ([*GOOD[:6], "--base-ref"], "--base-ref"),
    (["--step", "goals", "--round", "1", "--artifact-dir", "{D}", "\udcff"], "\\xff"),
    (["--\x1b[31m"], "\\x1b"),
])
def test_a_bad_argument_is_exit_1_one_line_naming_it_never_a_traceback(
        repo: Repo, args: list[str], named: str) -> None:
    got = prep(repo, *args)
    assert got.returncode == 1
    line = one_error_line(got)
    assert named in line
    assert b"\x1b" not in got.stderr
    assert not (repo.top / "reviews").exists()


def test_flag_equals_value_and_the_last_occurrence_win(repo: Repo) -> None:
    got = prep(repo, "--step=questions", "--round=1", "--artifact-dir={D}",
               "--base-ref", "nope", "--base-ref=main", "--step", "goals")
    assert got.returncode == 0, got.stderr
    assert files_under(repo.top / "reviews") == ["goals", "goals/round-01.diff"]


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_is_laid_out_as_every_other_help_and_exits_0(flag: str) -> None:
    got = run_main("review-prep", flag)
    assert got.returncode == 0
    text = got.stdout.decode()
    assert text.startswith("Usage: qrspi-guard review-prep --step STEP --round NN")
    other = run_main("fan-in", "--help").stdout.decode()
    # the same sections in the same order: usage, description, options, exit codes
    for got_text in (text, other):
        assert got_text.index("Usage: ") < got_text.index("\nOptions:\n") \
            < got_text.index("Exit codes")
    for option in ("--step STEP", "--round NN", "--artifact-dir DIR", "--base-ref REF",
                   "-h, --help"):
        assert f"\n  {option} " in text, option


def test_a_non_numeric_round_is_checked_before_the_step(repo: Repo) -> None:
    got = prep(repo, "--step", "bogus", "--round", "x", "--artifact-dir", "{D}")
    assert got.returncode == 1 and "--round" in one_error_line(got)


def test_an_unreadable_anchor_names_the_anchor(repo: Repo, tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads a mode-000 file")
    anchor = repo.anchor("goals", 1, repo.head() + "\n")
    anchor.chmod(0)
    try:
        got = round_n(repo, "02")
    finally:
        anchor.chmod(stat.S_IRUSR | stat.S_IWUSR)
    assert got.returncode == 1
    assert "anchor-file-missing:" in one_error_line(got)


def test_a_kill_between_the_diff_and_the_map_leaves_the_new_diff_and_the_old_map(
        repo: Repo) -> None:
    """The diff is renamed into place first, the map second: a kill in between leaves
    the new diff beside the old map (and a hidden temp file); a rerun completes both."""
    old_map = repo.put("reviews/design/round-01.absorption-map.tsv", "G1\tno-task\n")
    got = run_cli("review-prep", "--step", "design", "--round", "01", "--artifact-dir",
                  str(repo.top), "--base-ref", "main",
                  env={"QRSPI_GUARD_WRITE_FAULT": "kill@rename:round-01.absorption-map.tsv",
                       "HOME": str(repo.home)})
    assert got.returncode == -9
    assert (repo.reviews("design") / "round-01.diff").read_bytes() == \
        repo.git("diff", "main", "--", "design.md")
    assert old_map.read_text() == "G1\tno-task\n"
    assert round1(repo, "design").returncode == 0
    assert old_map.read_bytes() == b"G3\tCD-2\nG4\tno-task\nG9\tno-task\n"


def test_an_artifact_dir_whose_name_is_not_utf8(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    raw = os.fsdecode(b"run\xff")
    repo.put(f"{raw}/goals.md", "# goals\n")
    repo.commit("odd name")
    repo.put(f"{raw}/goals.md", "# goals\nmore\n")
    art = str(repo.top / raw)
    got = prep(repo, "--step", "goals", "--round", "01", "--artifact-dir", art,
               "--base-ref", "HEAD")
    assert got.returncode == 0, got.stderr
    assert (Path(art) / "reviews" / "goals" / "round-01.diff").is_file()
    got = prep(repo, "--step", "goals", "--round", "02", "--artifact-dir", art)
    assert got.returncode == 1
    assert "run\\xff" in one_error_line(got)
