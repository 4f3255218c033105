"""The README's CI, pre-commit and configuration snippets work as written (where the
user keeps qrspi-guard aside: the placeholders `<owner>/qrspi-guard` and a git URL),
pinned to this release."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import REPO, run_main

README = (REPO / "README.md").read_text()
CHECK_JSONSCHEMA = Path(sys.executable).parent / "check-jsonschema"
PRE_COMMIT = Path(sys.executable).parent / "pre-commit"


def blocks(lang: str, text: str = README) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", text, flags=re.S)


def section(title: str) -> str:
    start = README.index(title)
    end = README.find("\n### ", start + 1)
    return README[start:end]


@pytest.mark.skipif(not CHECK_JSONSCHEMA.exists(), reason="check-jsonschema not installed")
def test_the_readme_workflow_validates_as_a_github_workflow(tmp_path: Path) -> None:
    (workflow,) = blocks("yaml", section("### In CI (GitHub Actions)"))
    assert "<owner>/qrspi-guard@v" in workflow and "upload-sarif" in workflow
    path = tmp_path / "qrspi-guard.yml"
    path.write_text(workflow)
    proc = subprocess.run([str(CHECK_JSONSCHEMA), "--builtin-schema", "vendor.github-workflows",
                           str(path)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.skipif(not PRE_COMMIT.exists(), reason="pre-commit not installed")
def test_the_readme_pre_commit_config_is_valid_and_wires_one_hook_at_a_release_tag(
        tmp_path: Path) -> None:
    import yaml

    from qrspi_guard import __version__

    (config,) = blocks("yaml", section("### As a pre-commit hook"))
    path = tmp_path / ".pre-commit-config.yaml"
    path.write_text(config)
    proc = subprocess.run([str(PRE_COMMIT), "validate-config", str(path)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (repo,) = yaml.safe_load(config)["repos"]
    assert [h["id"] for h in repo["hooks"]] == ["qrspi-guard"]  # one: errors print once
    hook_ids = {h["id"] for h in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}
    assert {h["id"] for h in repo["hooks"]} <= hook_ids
    assert repo["rev"] == f"v{__version__}"  # a tag, never a branch pre-commit warns about
    assert "github.com/" + "OWNER" not in config


def test_every_snippet_pins_the_release_tag_and_the_changelog_has_that_release() -> None:
    from qrspi_guard import __version__

    tag = f"v{__version__}"
    texts = {"README.md": README, "docs/ci.md": (REPO / "docs" / "ci.md").read_text(),
             "docs/examples/qrspi-guard.yml":
                 (REPO / "docs" / "examples" / "qrspi-guard.yml").read_text()}
    for name, text in texts.items():
        text = text.replace("qrspi-guard@qrspi-guard", "")  # the plugin's id: no pin
        pins = re.findall(r"(?:qrspi-guard@|rev: |qrspi-guard.*@)(v?[\w.]+)", text)
        assert pins and set(pins) == {tag}, (name, pins)
    changelog = (REPO / "CHANGELOG.md").read_text()
    assert changelog.startswith("# Changelog")
    assert f"## [{__version__}] - " in changelog
    assert "keepachangelog.com" in changelog


def test_the_gitlab_job_installs_qrspi_guard_not_the_repository_it_checks() -> None:
    (gitlab,) = blocks("yaml", (REPO / "docs" / "ci.md").read_text())
    install = next(ln for ln in gitlab.splitlines() if "pip install" in ln)
    assert "pip install ." not in install and "qrspi-guard @ git+" in install


def test_the_readme_configuration_example_is_accepted(tmp_path: Path) -> None:
    from qrspi_guard.settings import resolve

    (toml,) = blocks("toml")
    (tmp_path / "pyproject.toml").write_text(toml)
    s = resolve(start=str(tmp_path))
    assert s.strict and "fnum_gap" in s.selection.disabled
    assert s.extra_expected == (("design", ("stitching-audit-claude",)),)
    (tmp_path / "pyproject.toml").write_text(toml.replace("strict = true", "strict = 1"))
    proc = run_main("check", ".", cwd=tmp_path)
    assert proc.returncode == 2
    assert re.fullmatch(r"qrspi-guard check: error: pyproject\.toml:\d+: strict: must be true or "
                        r"false\n", proc.stderr.decode())


def test_the_readme_selection_command_runs_as_written() -> None:
    cmd = next(b for b in blocks("sh") if "--statistics" in b).strip()
    args = cmd.split()[1:]  # .venv/bin/qrspi-guard ...
    proc = run_main(*args, cwd=REPO)
    assert proc.returncode == 1
    assert proc.stdout.decode().splitlines()[:2] == ["1  change_type_out_of_enum  error",
                                                     "1  missing_change_type      error"]


def test_the_gitlab_example_names_options_check_has() -> None:
    (gitlab,) = blocks("yaml", (REPO / "docs" / "ci.md").read_text())
    line = next(ln for ln in gitlab.splitlines() if "qrspi-guard check" in ln)
    args = line.split("qrspi-guard ", 1)[1].split()
    help_text = run_main("check", "--help").stdout.decode()
    for arg in args:
        if arg.startswith("--"):
            assert arg in help_text, arg


def test_the_readme_adoption_workflow_runs_as_written_and_then_fails_only_on_new_problems(
        tmp_path: Path) -> None:
    import os
    import shutil

    from tests.support import FIXTURES, SCRIPT

    commands = [ln for ln in blocks("sh", section("### Adopting the gate")) [0].splitlines()
                if ln.strip()]
    assert commands[0].startswith("qrspi-guard check . --write-baseline")
    assert commands[-1] == "qrspi-guard check ."
    repo = tmp_path / "repo"
    for name in ("example", "example-fanin"):
        shutil.copytree(FIXTURES / name, repo / name)
    env = {**os.environ, "PATH": f"{SCRIPT.parent}{os.pathsep}{os.environ['PATH']}",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    for var in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "NO_COLOR", "FORCE_COLOR"):
        env.pop(var, None)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "add", "."], cwd=repo, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", "old rounds"], cwd=repo, check=True, env=env)

    def sh(cmd: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", "-c", cmd], cwd=repo, env=env, capture_output=True,
                              text=True, timeout=120)

    for cmd in commands[:-1]:
        proc = sh(cmd)
        assert proc.returncode == 0, (cmd, proc.stdout, proc.stderr)
    assert "wrote 5 baseline entries to qrspi-guard-baseline.json" in sh(commands[0]).stderr
    assert subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True,
                          text=True).stdout == ""  # all committed
    gate = sh(commands[-1])
    assert gate.returncode == 0, gate.stdout + gate.stderr
    assert gate.stdout.splitlines() == [
        "9 rounds, 48 files: 0 errors, 0 warnings (5 in baseline, 0 fixed)"]
    new = next(repo.glob("example/**/design/round-02")) / "quality-claude.finding-F03.md"
    new.write_text(next(new.parent.glob("*F01.md")).read_text()
                   .replace("R2-F01", "R2-F03").replace("severity: high", "severity: hihg"))
    gate = sh(commands[-1])
    assert gate.returncode == 1
    lines = gate.stdout.splitlines()
    assert all("quality-claude.finding-F03.md" in ln for ln in lines[:-1]), lines
    assert lines[-1].endswith("(5 in baseline, 0 fixed)")
