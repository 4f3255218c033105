"""`await` trusts nothing a reviewer can write (issue 29, loop.md "await"): what runs is
fixed from QRSPI_AWAIT_EXEC_ROOTS and the repository the command was started in; the
manifest is read under one set of JSON rules and re-read before it is written back; the
round is listed once; a step or round directory that is a link is never written
through."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import run_main
from tests.test_loop_await import drain, output, pending, statuses, stub, write_manifest


@pytest.fixture
def rd(tmp_path: Path) -> Path:
    d = tmp_path / "round-01"
    (d / ".dispatch").mkdir(parents=True)
    return d


# -- the manifest's JSON ----------------------------------------------------------------

def test_a_number_json_cannot_carry_back_is_named_and_never_rewritten_as_infinity(
        rd: Path, tmp_path: Path) -> None:
    path = rd / ".dispatch-manifest.json"
    original = b'[{"tag": "q", "mode": "first_party", "status": "done", "cost": 1e400}]'
    path.write_bytes(original)
    proc = drain(rd)
    assert proc.returncode == 1, output(proc)
    assert "1e400 is too large" in output(proc)
    assert path.read_bytes() == original  # never `Infinity`, which is not JSON
    assert not (rd / ".round-complete.json").exists()


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_a_manifest_holding_nan_or_infinity_is_a_named_error_and_left_as_it_was(
        rd: Path, constant: str) -> None:
    path = rd / ".dispatch-manifest.json"
    original = f'[{{"tag": "q", "mode": "first_party", "x": {constant}}}]'.encode()
    path.write_bytes(original)
    proc = drain(rd)
    assert proc.returncode == 1 and f"{constant} is not JSON" in output(proc)
    assert path.read_bytes() == original


def test_a_nul_byte_in_a_manifest_command_is_a_named_error_not_an_internal_error(
        rd: Path, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    ran = tmp_path / "ran"
    a = stub(bin_dir, "a.sh", f'touch "{ran}"')
    path = write_manifest(rd, [pending("q", f"{a}\0 --x")])
    original = path.read_bytes()
    proc = drain(rd, roots=bin_dir)
    assert proc.returncode == 1, output(proc)
    assert "internal error" not in output(proc)
    assert "entry 1's await_cmd holds a NUL byte" in output(proc)
    assert path.read_bytes() == original and not ran.exists()


def test_a_manifest_entry_with_a_duplicate_key_is_a_named_error(rd: Path) -> None:
    path = rd / ".dispatch-manifest.json"
    original = b'[{"tag": "q", "tag": "other", "mode": "first_party"}]'
    path.write_bytes(original)
    proc = run_main("await", "--round-dir", str(rd))
    assert proc.returncode == 1 and "the key 'tag' appears twice" in output(proc)
    assert path.read_bytes() == original


# -- what runs: exec roots never from a place reviewers write ----------------------------

def _evil_git_dir(tmp_path: Path, worktree: Path) -> Path:
    """A git directory whose core.worktree is *worktree* (as a reviewer could make one)."""
    gitdir = tmp_path / "evil.git"
    subprocess.run(["git", "init", "-q", "--bare", str(gitdir)], check=True)
    subprocess.run(["git", "--git-dir", str(gitdir), "config", "core.bare", "false"],
                   check=True)
    subprocess.run(["git", "--git-dir", str(gitdir), "config", "core.worktree",
                    str(worktree)], check=True)
    return gitdir


def _chosen(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(a program that touches *pwned*, *pwned*, a git directory whose work tree holds the
    program in its scripts/): what a reviewer would plant."""
    chosen = tmp_path / "chosen"
    pwned = tmp_path / "pwned"
    evil = stub(chosen / "scripts", "evil.sh", f'touch "{pwned}"')
    return evil, pwned, _evil_git_dir(tmp_path, chosen)


def _run_round(tmp_path: Path) -> tuple[Path, Path]:
    """(a run's directory, its design round 1 with an empty .dispatch/)."""
    run = tmp_path / "run"
    rd = run / "reviews" / "design" / "round-01"
    (rd / ".dispatch").mkdir(parents=True)
    return run, rd


def test_a_git_file_a_reviewer_writes_into_the_round_adds_no_exec_root(
        rd: Path, tmp_path: Path) -> None:
    evil, pwned, gitdir = _chosen(tmp_path)
    (rd / ".git").write_text(f"gitdir: {gitdir}\n")  # what the reviewer wrote
    write_manifest(rd, [pending("quality-x", str(evil))])
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = run_main("await", "--round-dir", str(rd), cwd=elsewhere,
                    env={"QRSPI_AWAIT_EXEC_ROOTS": None})
    assert not pwned.exists(), "a program the round chose ran"
    assert proc.returncode == 1 and "resolves outside the exec roots" in output(proc)
    assert statuses(rd) == ["failed"]


def test_git_is_not_asked_from_a_working_directory_inside_the_round(
        rd: Path, tmp_path: Path) -> None:
    evil, pwned, gitdir = _chosen(tmp_path)
    (rd / ".git").write_text(f"gitdir: {gitdir}\n")
    write_manifest(rd, [pending("quality-x", str(evil))])
    proc = run_main("await", "--round-dir", str(rd), cwd=rd,
                    env={"QRSPI_AWAIT_EXEC_ROOTS": None})
    assert not pwned.exists()
    assert proc.returncode == 1
    assert "the working directory is inside the round directory" in output(proc)


def test_a_repository_whose_git_directory_lies_in_the_reviews_tree_adds_no_exec_root(
        tmp_path: Path) -> None:
    run, rd = _run_round(tmp_path)
    evil, pwned, gitdir = _chosen(tmp_path)
    planted = run / "reviews" / "design" / "planted.git"
    gitdir.rename(planted)
    (run / ".git").write_text(f"gitdir: {planted}\n")
    write_manifest(rd, [pending("quality-x", str(evil))])
    proc = run_main("await", "--round-dir", str(rd), cwd=run,
                    env={"QRSPI_AWAIT_EXEC_ROOTS": None})
    assert not pwned.exists(), "a program a .git entry in reviews/ chose ran"
    assert proc.returncode == 1
    assert "git directory (a .git entry) inside the run's reviews/ tree" in output(proc)


def test_a_program_in_the_run_s_reviews_tree_is_refused_even_under_an_exec_root(
        tmp_path: Path) -> None:
    run, rd = _run_round(tmp_path)
    pwned = tmp_path / "pwned"
    evil = stub(run / "reviews" / "design", "evil.sh", f'touch "{pwned}"')
    write_manifest(rd, [pending("quality-x", str(evil))])
    proc = drain(rd, roots=run)  # an exec root that holds the whole run
    assert not pwned.exists()
    assert proc.returncode == 1
    assert "resolves inside the run's reviews/ tree, which reviewers write" in output(proc)


def test_stub_programs_beside_a_round_outside_any_run_still_run(rd: Path,
                                                                tmp_path: Path) -> None:
    """Upstream's own suite: QRSPI_AWAIT_EXEC_ROOTS is the directory holding the round and
    its stubs; the stubs run, a program inside the round does not."""
    ran = tmp_path / "ran"
    beside = stub(tmp_path, "stub-await.sh", f'touch "{ran}"')
    inside = stub(rd / ".dispatch", "x.sh", f'touch "{tmp_path}/inside"')
    write_manifest(rd, [pending("quality-x", str(beside)), pending("scope-x", str(inside))])
    proc = drain(rd, roots=tmp_path)
    assert ran.exists() and not (tmp_path / "inside").exists()
    assert "resolves inside the round directory" in output(proc)
    assert statuses(rd) == ["complete", "failed"]


# -- the manifest re-read before it is written back ---------------------------------------

ADD_UNDER_LOCK = r'''
import fcntl, json, os, sys
round_dir, tag = sys.argv[1], sys.argv[2]
fd = os.open(round_dir, os.O_RDONLY | os.O_DIRECTORY)
fcntl.flock(fd, fcntl.LOCK_EX)
path = os.path.join(round_dir, ".dispatch-manifest.json")
with open(path) as f:
    doc = json.load(f)
doc.append({"tag": tag, "mode": "first_party", "status": "dispatched"})
with open(path + ".tmp", "w") as f:
    json.dump(doc, f)
os.rename(path + ".tmp", path)
os.close(fd)
'''


def test_an_entry_added_while_the_drain_runs_its_commands_is_kept(rd: Path,
                                                                  tmp_path: Path) -> None:
    adder = tmp_path / "bin" / "add.py"
    adder.parent.mkdir()
    adder.write_text(ADD_UNDER_LOCK)
    a = stub(tmp_path / "bin", "await.sh", f'"{sys.executable}" "{adder}" "{rd}" late-x')
    write_manifest(rd, [pending("quality-x", str(a))])
    proc = drain(rd, roots=tmp_path / "bin")
    doc = json.loads((rd / ".dispatch-manifest.json").read_text())
    assert [e["tag"] for e in doc] == ["quality-x", "late-x"], "the added entry was erased"
    assert doc[1] == {"tag": "late-x", "mode": "first_party", "status": "dispatched"}
    assert doc[0]["status"] == "complete"
    assert proc.returncode == 1 and "1 entry of .dispatch-manifest.json came or changed" \
        in output(proc)
    assert (rd / ".dispatch").is_dir()  # the late entry's capture may be there


WRITER = r'''
import fcntl, json, os, sys, time
round_dir, count, stop = sys.argv[1], int(sys.argv[2]), sys.argv[3]
path = os.path.join(round_dir, ".dispatch-manifest.json")
for i in range(count):
    fd = os.open(round_dir, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    with open(path) as f:
        doc = json.load(f)
    doc.append({"tag": f"added-{i}", "mode": "first_party", "status": "dispatched"})
    tmp = f"{path}.w{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(doc, f)
    os.rename(tmp, path)
    os.close(fd)
    time.sleep(0.002)
open(stop, "w").close()
'''


def test_a_writer_that_holds_the_round_lock_never_loses_a_write_to_a_drain(
        rd: Path, tmp_path: Path) -> None:
    """Many drains, each releasing the lock while a command runs, against a writer that
    adds entries under the lock as fast as it can: every added entry survives."""
    bin_dir = tmp_path / "bin"
    a = stub(bin_dir, "await.sh", "exit 0")
    writer = tmp_path / "writer.py"
    writer.write_text(WRITER)
    done = tmp_path / "done"
    write_manifest(rd, [pending("quality-x", str(a))])
    count = 150
    proc = subprocess.Popen([sys.executable, str(writer), str(rd), str(count), str(done)])
    try:
        drains = 0
        while not done.exists() or drains < 10:
            path = rd / ".dispatch-manifest.json"
            fd = os.open(rd, os.O_RDONLY | os.O_DIRECTORY)
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                doc = json.loads(path.read_text())
                doc.append(pending(f"bg-{drains}", str(a)))  # a command: lock released
                path.write_text(json.dumps(doc))
            finally:
                os.close(fd)
            drain(rd, roots=bin_dir)
            drains += 1
    finally:
        assert proc.wait(timeout=60) == 0
    drain(rd, roots=bin_dir)
    tags = {e["tag"] for e in json.loads((rd / ".dispatch-manifest.json").read_text())}
    lost = [i for i in range(count) if f"added-{i}" not in tags]
    assert lost == [], f"{len(lost)} of {count} writes lost over {drains} drains"
    assert {f"bg-{i}" for i in range(drains)} <= tags


# -- cost: the round listed once -----------------------------------------------------------

def test_the_round_is_listed_once_whatever_the_number_of_entries(
        rd: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each entry used to list and classify the whole round (12,000 entries over 400
    files: 47 s); the drain's cost is now the entries plus the files."""
    for i in range(300):
        (rd / f"r{i}-x.finding-F01.md").write_text("x\n")
    write_manifest(rd, [{"tag": f"r{i}-x", "mode": "first_party", "status": "done"}
                        for i in range(300)])
    real = os.listdir
    calls: list[object] = []

    def counting(path: object = ".") -> list[str]:
        calls.append(path)
        return real(path)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "listdir", counting)
    proc = drain(rd)
    assert proc.returncode == 0, output(proc)
    assert statuses(rd) == ["complete-with-findings"] * 300
    assert len(calls) <= 2, f"the round was listed {len(calls)} times"


def test_the_await_scale_benchmark_prints_both_sizes_and_their_ratio() -> None:
    """benchmarks/await_scale.py at smoke size (no timing asserted here)."""
    from tests.support import BENCHMARKS

    proc = subprocess.run([sys.executable, str(BENCHMARKS / "await_scale.py"), "--entries",
                           "40", "--files", "8", "--runs", "1"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("await, 10 entries over 2 files")
    assert "ratio" in lines[1] and lines[1].startswith("await, 40 entries over 8 files")
