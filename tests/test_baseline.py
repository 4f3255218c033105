"""The baseline (cli.md "Adopting the gate on a repository with old rounds"), on a copy of
the two example runs in a real git repository: written, committed, and then the gate
fails only on what is new; lines that move keep their entry, a fix drops out, a
corrupt baseline is exit 2 with one line."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import FIXTURES, run_main

DESIGN = "example/docs/qrspi/2026-05-17-auth-rework/reviews/design/round-02"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    for name in ("example", "example-fanin"):
        shutil.copytree(FIXTURES / name, root / name)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def check(repo: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    return run_main("check", *args, cwd=cwd or repo)


def write(repo: Path, name: str = "baseline.json") -> dict:  # type: ignore[type-arg]
    proc = check(repo, ".", "--write-baseline", name)
    assert proc.returncode == 0, proc.stderr
    return json.loads((repo / name).read_text())  # type: ignore[no-any-return]


def summary(proc: subprocess.CompletedProcess[bytes]) -> str:
    return proc.stdout.decode().splitlines()[-1]


def test_write_baseline_records_every_diagnostic_sorted_and_exits_0(repo: Path) -> None:
    doc = write(repo)
    assert doc["version"] == 1 and set(doc) == {"version", "entries"}
    entries = doc["entries"]
    assert len(entries) == 5
    assert all(set(e) == {"cause", "path", "fingerprint"} for e in entries)
    assert entries == sorted(entries, key=lambda e: (e["path"], e["cause"], e["fingerprint"]))
    # relative to the repository root; a round-level diagnostic names the round directory
    assert {"cause": "expected_tag_no_output", "path": DESIGN} == {
        k: v for k, v in entries[[e["path"] for e in entries].index(DESIGN)].items()
        if k != "fingerprint"}
    assert not any(e["path"].startswith(("/", "..")) for e in entries)


def test_the_fingerprint_is_the_one_sarif_carries(repo: Path) -> None:
    doc = write(repo)
    check(repo, ".", "--format", "sarif", "--output", "guard.sarif")
    sarif = json.loads((repo / "guard.sarif").read_text())
    prints = {r["partialFingerprints"]["qrspiGuard/v1"] for r in sarif["runs"][0]["results"]}
    assert prints == {e["fingerprint"] for e in doc["entries"]}


def test_with_the_baseline_the_old_tree_passes_and_says_how_many_were_left_out(
        repo: Path) -> None:
    write(repo)
    proc = check(repo, ".", "--baseline", "baseline.json")
    assert proc.returncode == 0, proc.stdout
    assert proc.stdout.decode().count("error") == 1  # the summary line only
    assert summary(proc).endswith("0 errors, 0 warnings (5 in baseline, 0 fixed)")


def test_an_entry_still_matches_after_its_lines_move(repo: Path) -> None:
    write(repo)
    f01 = repo / DESIGN / "quality-claude.finding-F01.md"
    text = f01.read_text()
    moved = text.replace("change_type: corectness\n", "").replace(
        "round: 2\n", "round: 2\nchange_type: corectness\n")
    assert moved != text
    f01.write_text(moved + "\nOne more paragraph.\n")
    proc = check(repo, ".", "--baseline", "baseline.json")
    assert proc.returncode == 0, proc.stdout
    assert summary(proc).endswith("(5 in baseline, 0 fixed)")


def test_a_fix_is_counted_and_drops_out_when_the_baseline_is_written_again(
        repo: Path) -> None:
    write(repo)
    f02 = repo / DESIGN / "quality-claude.finding-F02.md"
    f02.write_text(f02.read_text().replace("category:", "change_type:"))
    proc = check(repo, ".", "--baseline", "baseline.json")
    assert proc.returncode == 0
    assert summary(proc).endswith("(4 in baseline, 1 fixed)")
    doc = write(repo)
    assert len(doc["entries"]) == 4
    assert summary(check(repo, ".", "--baseline", "baseline.json")).endswith(
        "(4 in baseline, 0 fixed)")


def test_a_new_defect_fails_the_gate_in_every_format(repo: Path) -> None:
    write(repo)
    f01 = repo / DESIGN / "quality-claude.finding-F01.md"
    f01.write_text(f01.read_text().replace("severity: high", "severity: hihg"))
    (repo / DESIGN / "quality-claude.finding-F03.md").write_bytes(b"---\nnot: [closed\n")
    proc = check(repo, ".", "--baseline", "baseline.json")
    assert proc.returncode == 1
    lines = proc.stdout.decode().splitlines()
    assert len(lines) == 3, lines  # the two new defects and the summary
    assert "severity" in lines[0] and "F03" in lines[1]
    assert summary(proc).endswith("2 errors, 0 warnings (5 in baseline, 0 fixed)")
    js = json.loads(check(repo, ".", "--baseline", "baseline.json", "--format", "json")
                    .stdout)
    assert len(js["diagnostics"]) == 2
    assert js["summary"]["in_baseline"] == 5 and js["summary"]["fixed"] == 0
    gh = check(repo, ".", "--baseline", "baseline.json", "--format", "github").stdout.decode()
    assert len(re.findall(r"^::error ", gh, re.M)) == 2
    sarif = json.loads(check(repo, ".", "--baseline", "baseline.json", "--format", "sarif")
                       .stdout)
    assert len(sarif["runs"][0]["results"]) == 2
    junit = check(repo, ".", "--baseline", "baseline.json", "--format", "junit").stdout
    assert junit.count(b"<failure") == 2


def test_status_files_are_not_filtered(repo: Path) -> None:
    write(repo)
    proc = check(repo, ".", "--baseline", "baseline.json", "--write-status")
    assert proc.returncode == 0
    status = json.loads((repo / (DESIGN + "-guard.json")).read_text())
    assert status["status"] == "halt"


@pytest.mark.parametrize("content, said", [
    (None, "cannot be read"),
    ("{\n  \"version\": 1,\n  \"entries\": [\n", "does not parse"),
    ('{"version": 2, "entries": []}', "version 2 is not 1"),
    ('{"version": 1, "entries": [{"cause": "fnum_gap"}]}', "entry 1"),
    ("[]", "not a qrspi-guard baseline"),
])
def test_a_missing_corrupt_or_other_version_baseline_is_exit_2_with_one_line(
        repo: Path, content: str | None, said: str) -> None:
    if content is not None:
        (repo / "baseline.json").write_text(content)
    proc = check(repo, ".", "--baseline", "baseline.json")
    assert proc.returncode == 2
    err = proc.stderr.decode()
    assert err.count("\n") == 1 and said in err and "baseline.json" in err, err
    assert proc.stdout == b""


@pytest.mark.parametrize("kind", ["fifo", "socket"])
def test_a_baseline_that_is_not_a_regular_file_is_exit_2_saying_so(repo: Path,
                                                                   kind: str) -> None:
    """A socket said "No such device or address" (open's ENXIO) before it was looked at."""
    if kind == "fifo":
        os.mkfifo(repo / "baseline.json")
    else:  # bound where it stands (a relative name: a socket path is at most 107 bytes)
        subprocess.run([sys.executable, "-c", "import socket; "
                        "socket.socket(socket.AF_UNIX).bind('baseline.json')"],
                       cwd=repo, check=True)
    proc = check(repo, ".", "--baseline", "baseline.json")
    assert proc.returncode == 2 and proc.stdout == b""
    assert proc.stderr.decode().endswith("baseline baseline.json: not a regular file\n")


def test_the_project_setting_is_relative_to_its_file_and_read_from_a_subdirectory(
        repo: Path) -> None:
    (repo / "qa").mkdir()
    write(repo, "qa/baseline.json")
    (repo / "pyproject.toml").write_text('[tool.qrspi-guard]\nbaseline = "qa/baseline.json"\n')
    proc = check(repo, ".", cwd=repo / "example")
    assert proc.returncode == 0, proc.stdout
    assert summary(proc).endswith("(3 in baseline, 0 fixed)")  # example-fanin unseen
    shown = check(repo, "--show-settings").stdout.decode()
    assert re.search(r'^baseline = ".*qa/baseline\.json"  # pyproject\.toml', shown, re.M)
    # --baseline replaces the setting; --isolated reads no file
    assert check(repo, ".", "--baseline", "missing.json").returncode == 2
    assert check(repo, ".", "--isolated").returncode == 1


def test_a_baseline_setting_that_is_not_a_file_name_is_exit_2(repo: Path) -> None:
    (repo / ".qrspi-guard.toml").write_text("baseline = 3\n")
    proc = check(repo, ".")
    assert proc.returncode == 2
    assert proc.stderr.decode() == ("qrspi-guard check: error: .qrspi-guard.toml:1: baseline: "
                                    "must be a file name (relative to this file)\n")


def test_write_baseline_refuses_options_it_would_ignore_before_any_work(repo: Path) -> None:
    for extra in (["--baseline", "b.json"], ["--output", "o.json"], ["--statistics"]):
        proc = check(repo, ".", "--write-baseline", "w.json", *extra)
        assert proc.returncode == 2, extra
        assert not (repo / "w.json").exists() and not (repo / "o.json").exists()


def test_watch_and_hook_ignore_the_baseline_setting(repo: Path) -> None:
    """A live round is never old: with every defect in the baseline, check passes, but
    the judge watch uses still halts the round and the hook still refuses the file."""
    from qrspi_guard.judge import Judge

    write(repo)
    (repo / "pyproject.toml").write_text('[tool.qrspi-guard]\nbaseline = "baseline.json"\n')
    assert check(repo, ".").returncode == 0
    round_dir = repo / DESIGN
    result = Judge.for_path(str(round_dir)).round(str(round_dir))
    assert result is not None and result.status == "halt"
    f01 = round_dir / "quality-claude.finding-F01.md"
    payload = {"hook_event_name": "PreToolUse", "tool_name": "Write", "cwd": str(repo),
               "tool_input": {"file_path": str(f01), "content": f01.read_text()}}
    proc = run_main("hook", input=json.dumps(payload))
    assert proc.returncode == 2 and b"change_type_out_of_enum" in proc.stderr


def test_files_of_one_round_count_as_fixed_only_the_entries_of_that_round(repo: Path) -> None:
    """As the pre-commit hook passes them: the other rounds' entries were not looked at."""
    write(repo)
    f02 = repo / DESIGN / "quality-claude.finding-F02.md"
    f02.write_text(f02.read_text().replace("category:", "change_type:"))
    proc = check(repo, f"{DESIGN}/quality-claude.finding-F02.md", "--baseline", "baseline.json")
    assert proc.returncode == 0
    assert summary(proc).endswith("(2 in baseline, 1 fixed)")


@pytest.mark.slow
def test_the_pre_commit_hooks_read_the_baseline_setting(repo: Path, tmp_path: Path) -> None:
    """The real `pre-commit try-repo`, both hooks, with `baseline` in .qrspi-guard.toml."""
    import os
    import sys

    from tests.support import REPO

    pre_commit = Path(sys.executable).parent / "pre-commit"
    if not pre_commit.exists():
        pytest.skip("pre-commit not installed")
    write(repo)
    (repo / ".qrspi-guard.toml").write_text('baseline = "baseline.json"\n')
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run([*git, "add", "-A"], cwd=repo, check=True)
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_ACTIONS"}
    env.update(PRE_COMMIT_HOME=str(tmp_path / "cache"), NO_COLOR="1")
    touched = f"{DESIGN}/quality-claude.finding-F01.md"

    def try_repo(hook: str) -> subprocess.CompletedProcess[str]:
        extra = ["--files", touched] if hook == "qrspi-guard" else ["--all-files"]
        return subprocess.run([str(pre_commit), "try-repo", str(REPO), hook, *extra],
                              cwd=repo, env=env, capture_output=True, text=True, timeout=900)

    for hook in ("qrspi-guard", "qrspi-guard-all"):
        proc = try_repo(hook)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    f01 = repo / touched
    f01.write_text(f01.read_text().replace("severity: high", "severity: hihg"))
    subprocess.run([*git, "add", "-A"], cwd=repo, check=True)
    for hook in ("qrspi-guard", "qrspi-guard-all"):
        proc = try_repo(hook)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert "severity_out_of_enum" in proc.stdout
        assert "change_type_out_of_enum" not in proc.stdout  # in the baseline
