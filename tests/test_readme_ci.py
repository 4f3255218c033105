"""The README's CI, pre-commit and configuration snippets work as written (the one
placeholder, OWNER/qrspi-guard, aside)."""

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
    assert "OWNER/qrspi-guard@" in workflow and "upload-sarif" in workflow
    path = tmp_path / "qrspi-guard.yml"
    path.write_text(workflow)
    proc = subprocess.run([str(CHECK_JSONSCHEMA), "--builtin-schema", "vendor.github-workflows",
                           str(path)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.skipif(not PRE_COMMIT.exists(), reason="pre-commit not installed")
def test_the_readme_pre_commit_config_is_valid_and_names_both_hooks(tmp_path: Path) -> None:
    import yaml

    (config,) = blocks("yaml", section("### As a pre-commit hook"))
    path = tmp_path / ".pre-commit-config.yaml"
    path.write_text(config)
    proc = subprocess.run([str(PRE_COMMIT), "validate-config", str(path)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ids = {h["id"] for h in yaml.safe_load(config)["repos"][0]["hooks"]}
    hook_ids = {h["id"] for h in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}
    assert ids == hook_ids


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
    assert re.fullmatch(r"qrspi-guard: error: pyproject\.toml:\d+: strict: must be true or "
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
