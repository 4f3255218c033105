"""What `adopt` can also set up in the project (the hook, the pre-commit entry, a
baseline), each through the core that owns it, and what undo takes out again."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from qrspi_guard.adopt import precommit
from tests.adoptkit import adopt, checkout, git, tree
from tests.support import FIXTURES, REPO, SCRIPT, run_cli

BLACK = "repos:\n- repo: https://github.com/psf/black\n  rev: 24.1.0\n  hooks:\n  - id: black\n"


def _project(tmp_path: Path) -> Path:
    """A repository whose rounds the loop writes: the example run, committed."""
    project = tmp_path / "project"
    shutil.copytree(FIXTURES / "example", project)
    git(project, "init", "-q")
    return project


def test_adopt_sets_up_hook_pre_commit_and_baseline_and_undo_takes_them_out(
        tmp_path: Path) -> None:
    co, project = checkout(tmp_path), _project(tmp_path)
    (project / ".pre-commit-config.yaml").write_text("# mine\n" + BLACK)
    (project / ".claude").mkdir()
    (project / ".claude/settings.json").write_text('{"model": "x"}\n')
    before = tree(project)
    proc = adopt(co, "--hook", "claude", "--hook", "gemini", "--pre-commit",
                 "--baseline", "qrspi-guard-baseline.json", "--project", str(project))
    assert proc.returncode == 0, proc.stderr
    claude = json.loads((project / ".claude/settings.json").read_text())
    assert claude["model"] == "x"
    commands = [h["command"] for g in claude["hooks"]["PreToolUse"] for h in g["hooks"]]
    assert commands == [f"{SCRIPT} hook --event pre"]
    assert (project / ".gemini/settings.json").exists()
    config = yaml.safe_load((project / ".pre-commit-config.yaml").read_text())
    assert config["repos"][0]["repo"] == "https://github.com/psf/black"
    assert config["repos"][1] == precommit.repo_entry((str(SCRIPT),),
                                                      "qrspi-guard-baseline.json")
    # the baseline is exactly check --write-baseline's, and the gate passes with it
    ref = project / "ref.json"
    assert run_cli("check", str(project), "--write-baseline", str(ref)).returncode == 0
    written = (project / "qrspi-guard-baseline.json").read_text()
    assert json.loads(written)["entries"] and written == ref.read_text()
    ref.unlink()
    assert run_cli("check", ".", "--baseline", "qrspi-guard-baseline.json",
                   cwd=project).returncode == 0

    proc = adopt(co, "--undo")
    assert proc.returncode == 0, proc.stderr
    assert b"baseline" in proc.stdout and b"removed" in proc.stdout
    after = tree(project)
    # hook uninstall rewrites the settings it edits (same JSON) and keeps a backup
    assert json.loads((project / ".claude/settings.json").read_text()) == {"model": "x"}
    for changed in (".claude/settings.json", ".claude/settings.json.qrspi-guard.bak",
                    ".claude"):
        before.pop(changed, None)
        after.pop(changed, None)
    # the config byte for byte (mode too); .gemini/ and the baseline gone
    assert {k: v[:3] for k, v in after.items()} == {k: v[:3] for k, v in before.items()}


def _pre_commit(project: Path, home: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([str(SCRIPT.parent / "pre-commit"), "run", "--all-files"],
                          cwd=project, capture_output=True,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(home),
                               "PRE_COMMIT_HOME": str(home / "pc")})


def test_the_pre_commit_entry_runs_under_real_pre_commit(tmp_path: Path) -> None:
    if not (SCRIPT.parent / "pre-commit").exists():
        pytest.skip("pre-commit is not installed")
    co, project = checkout(tmp_path), _project(tmp_path)
    proc = adopt(co, "--pre-commit", "--baseline", "b.json", "--project", str(project))
    assert proc.returncode == 0, proc.stderr
    git(project, "add", "-A")
    # PATH without the guard's environment: the entry names it by its absolute path
    run = _pre_commit(project, tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert b"qrspi-guard (every review round)" in run.stdout and b"Passed" in run.stdout
    # with an empty baseline the same entry fails on the example run's errors
    (project / "b.json").write_text('{"version": 1, "entries": []}\n')
    run = _pre_commit(project, tmp_path)
    assert run.returncode == 1 and b"change_type_out_of_enum" in run.stdout


def test_a_config_adopt_cannot_append_to_stops_everything_and_says_what_to_add(
        tmp_path: Path) -> None:
    co, project = checkout(tmp_path), _project(tmp_path)
    (project / ".pre-commit-config.yaml").write_text(BLACK + "ci:\n  skip: [black]\n")
    before_co, before = tree(co), tree(project)
    proc = adopt(co, "--pre-commit", "--project", str(project))
    assert proc.returncode == 1
    err = proc.stderr.decode()
    assert "cannot append to the repos: list of .pre-commit-config.yaml safely" in err
    assert "- id: qrspi-guard-all" in err and "language: system" in err
    assert tree(co) == before_co and tree(project) == before


def test_settings_that_do_not_parse_stop_adopt_before_any_write(tmp_path: Path) -> None:
    co, project = checkout(tmp_path), _project(tmp_path)
    (project / ".claude").mkdir()
    (project / ".claude/settings.json").write_text("{")
    before_co, before = tree(co), tree(project)
    proc = adopt(co, "--hook", "claude", "--project", str(project))
    assert proc.returncode == 2 and b"does not parse as JSON" in proc.stderr
    assert tree(co) == before_co and tree(project) == before


def test_what_was_there_before_adopt_stays_after_undo(tmp_path: Path) -> None:
    co, project = checkout(tmp_path), _project(tmp_path)
    assert run_cli("hook", "install", cwd=project).returncode == 0
    (project / "b.json").write_text('{"version": 1, "entries": []}\n')
    proc = adopt(co, "--hook", "claude", "--baseline", "b.json", "--project", str(project))
    assert b"Claude Code hook" in proc.stdout and b"already installed" in proc.stdout
    assert b"there already; kept as it is" in proc.stdout
    settings = (project / ".claude/settings.json").read_bytes()
    assert adopt(co, "--undo").returncode == 0
    assert (project / ".claude/settings.json").read_bytes() == settings
    assert (project / "b.json").exists()


def test_a_baseline_changed_after_adopt_is_kept_by_undo(tmp_path: Path) -> None:
    co, project = checkout(tmp_path), _project(tmp_path)
    assert adopt(co, "--baseline", "b.json", "--project", str(project)).returncode == 0
    (project / "b.json").write_text('{"version": 1, "entries": []}\n')
    proc = adopt(co, "--undo")
    assert proc.returncode == 0 and b"kept: changed since adopt wrote it" in proc.stdout
    assert (project / "b.json").exists()
    assert not (co / ".git/qrspi-guard-adopt").exists()


@pytest.mark.parametrize("old", [
    None, "", "repos:\n", BLACK, "# top\n" + BLACK + "# tail\n",
    "repos:\n  - repo: x\n    rev: '1'\n    hooks: [{id: a}]\n",
    "minimum_pre_commit_version: '3'\nrepos:\n- repo: x\n  rev: '1'\n  hooks: []",
])
def test_the_pre_commit_entry_is_appended_and_removed_as_text(old: str | None) -> None:
    guard = ("/opt/guard bin/qrspi-guard",)
    edit = precommit.add(old, guard, "base line.json")
    assert edit.refused is None and edit.text is not None
    doc = yaml.safe_load(edit.text)
    assert doc["repos"][-1] == precommit.repo_entry(guard, "base line.json")
    assert doc["repos"][-1]["hooks"][0]["entry"] == \
        "'/opt/guard bin/qrspi-guard' check --baseline 'base line.json'"
    assert precommit.add(edit.text, guard, None).present
    back = precommit.remove(edit.text, edit.added)
    assert back.refused is None and back.text is not None
    # as it was (a file that did not end its last line now does; an empty one, which
    # undo deletes when adopt created it, keeps the repos: line)
    expect = "repos:\n" if not old else old if old.endswith("\n") else old + "\n"
    assert back.text == expect


@pytest.mark.parametrize("old", ["repos: []\n", BLACK + "ci:\n  skip: [a]\n", "{", "- a\n"])
def test_a_config_that_cannot_take_the_entry_is_refused(old: str) -> None:
    edit = precommit.add(old, ("/g",), None)
    assert edit.text is None and edit.refused and "by hand" in edit.refused
    assert "- id: qrspi-guard-all" in edit.hint


def test_the_entry_is_the_repositorys_qrspi_guard_all_hook() -> None:
    hooks = {h["id"]: h for h in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}
    ours = precommit.repo_entry(("/g",), None)["hooks"][0]
    theirs = hooks[precommit.HOOK_ID]
    for key in ("name", "always_run", "pass_filenames", "require_serial"):
        assert ours[key] == theirs[key], key
    assert set(precommit.IDS) == set(hooks)
