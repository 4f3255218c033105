"""The GitHub Action and the example workflow: valid metadata (check-jsonschema's
vendored GitHub schemas), and the action's own scripts run as a runner would run them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.support import FIXTURES, REPO, SCRIPT

CHECK_JSONSCHEMA = Path(sys.executable).parent / "check-jsonschema"
ACTION = REPO / "action.yml"
WORKFLOW = REPO / "docs" / "examples" / "qrspi-guard.yml"
EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def check_jsonschema(schema: str, path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(CHECK_JSONSCHEMA), "--builtin-schema", schema, str(path)],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.skipif(not CHECK_JSONSCHEMA.exists(), reason="check-jsonschema not installed")
def test_action_metadata_validates_against_the_github_actions_schema() -> None:
    proc = check_jsonschema("vendor.github-actions", ACTION)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.skipif(not CHECK_JSONSCHEMA.exists(), reason="check-jsonschema not installed")
def test_the_example_workflow_validates_against_the_github_workflows_schema() -> None:
    proc = check_jsonschema("vendor.github-workflows", WORKFLOW)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_example_workflow_runs_the_action_and_uploads_its_sarif() -> None:
    doc = yaml.safe_load(WORKFLOW.read_text())
    (job,) = doc["jobs"].values()
    steps = job["steps"]
    guard = next(s for s in steps if s.get("uses", "").startswith("<owner>/qrspi-guard@"))
    upload = next(s for s in steps if s.get("uses", "").startswith(
        "github/codeql-action/upload-sarif@"))
    assert upload["with"]["sarif_file"] == guard["with"]["sarif"]
    assert "!cancelled()" in upload["if"]  # uploaded when the gate fails too
    assert job["permissions"]["security-events"] == "write"


def action() -> dict:  # type: ignore[type-arg]
    return yaml.safe_load(ACTION.read_text())  # type: ignore[no-any-return]


def test_the_action_is_composite_and_its_scripts_take_inputs_only_through_env() -> None:
    doc = action()
    assert doc["runs"]["using"] == "composite"
    assert set(doc["inputs"]) >= {"paths", "sarif", "args"}
    assert doc["inputs"]["paths"]["default"] == "."
    for step in doc["runs"]["steps"]:
        # no ${{ }} inside a script: an input can never become shell code
        assert not EXPR.search(step["run"]), step["name"]
    install = doc["runs"]["steps"][0]
    assert install["env"]["QRSPI_GUARD_ACTION_PATH"] == "${{ github.action_path }}"
    assert 'pip install --quiet --disable-pip-version-check "$QRSPI_GUARD_ACTION_PATH"' in (
        install["run"])


def _env(step: dict, inputs: dict[str, str]) -> dict[str, str]:  # type: ignore[type-arg]
    def value(text: str) -> str:
        def one(m: re.Match[str]) -> str:
            expr = m.group(1)
            if expr.startswith("inputs."):
                return inputs[expr[len("inputs."):]]
            if expr == "github.action_path":
                return str(REPO)
            raise AssertionError(f"unexpected expression {expr}")
        return EXPR.sub(one, text)

    return {k: value(str(v)) for k, v in step.get("env", {}).items()}


def run_step(step: dict, inputs: dict[str, str], tmp: Path,  # type: ignore[type-arg]
             extra_env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "NO_COLOR"))}
    env.update(RUNNER_TEMP=str(tmp / "runner"), GITHUB_ENV=str(tmp / "env"),
               GITHUB_OUTPUT=str(tmp / "output"), GITHUB_ACTIONS="true",
               GITHUB_STEP_SUMMARY=str(tmp / "summary.md"), **extra_env)
    env.update(_env(step, inputs))
    (tmp / "runner").mkdir(exist_ok=True)
    # as the runner runs `shell: bash`: bash --noprofile --norc -eo pipefail {0}
    script = tmp / "step.sh"
    script.write_text(step["run"])
    return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
                          cwd=FIXTURES, env=env,
                          capture_output=True, text=True, timeout=900)


def inputs_with(**given: str) -> dict[str, str]:
    out = {name: str(spec.get("default", "")) for name, spec in action()["inputs"].items()}
    out.update(given)
    return out


def test_the_check_step_annotates_writes_sarif_and_the_step_summary_and_fails_the_job(
        tmp_path: Path) -> None:
    check_step = action()["runs"]["steps"][1]
    sarif = tmp_path / "guard.sarif"
    proc = run_step(check_step, inputs_with(paths="example\nvalid", sarif=str(sarif),
                                            args="--ignore fnum_gap"),
                    tmp_path, {"QRSPI_GUARD_BIN": str(SCRIPT)})
    assert proc.returncode == 1, proc.stderr
    assert "::error file=example/" in proc.stdout and "title=change_type_out_of_enum" in (
        proc.stdout)
    doc = json.loads(sarif.read_text())
    assert {r["ruleId"] for r in doc["runs"][0]["results"]} == {
        "change_type_out_of_enum", "missing_change_type", "expected_tag_no_output"}
    assert "exit-code=1" in (tmp_path / "output").read_text()
    assert "## qrspi-guard" in (tmp_path / "summary.md").read_text()


def test_the_check_step_passes_a_clean_tree_without_sarif(tmp_path: Path) -> None:
    check_step = action()["runs"]["steps"][1]
    proc = run_step(check_step, inputs_with(paths="valid"), tmp_path,
                    {"QRSPI_GUARD_BIN": str(SCRIPT)})
    assert proc.returncode == 0, proc.stderr
    assert "exit-code=0" in (tmp_path / "output").read_text()


@pytest.mark.slow
def test_the_install_step_installs_the_guard_from_the_actions_checkout(tmp_path: Path) -> None:
    install = action()["runs"]["steps"][0]
    proc = run_step(install, inputs_with(python=sys.executable), tmp_path, {})
    if proc.returncode != 0 and "No matching distribution" in proc.stderr:
        pytest.skip("the package index is not reachable")
    assert proc.returncode == 0, proc.stderr
    line = (tmp_path / "env").read_text().strip()
    assert line.startswith("QRSPI_GUARD_BIN=")
    guard = line.split("=", 1)[1]
    assert subprocess.run([guard, "-V"], capture_output=True, text=True).stdout.startswith(
        "qrspi-guard, version")


@pytest.mark.parametrize("args", ['--ignore "fnum_gap"', "--ignore 'fnum_gap,trailing_newline'",
                                  '--ignore fnum_gap --select "ALL"'])
def test_the_action_splits_args_as_a_shell_would(tmp_path: Path, args: str) -> None:
    check_step = action()["runs"]["steps"][1]
    proc = run_step(check_step, inputs_with(paths="valid", args=args), tmp_path,
                    {"QRSPI_GUARD_BIN": str(SCRIPT)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "exit-code=0" in (tmp_path / "output").read_text()


def test_action_args_that_cannot_be_split_fail_with_one_annotation(tmp_path: Path) -> None:
    check_step = action()["runs"]["steps"][1]
    proc = run_step(check_step, inputs_with(paths="valid", args='--ignore "fnum_gap'),
                    tmp_path, {"QRSPI_GUARD_BIN": str(SCRIPT)})
    assert proc.returncode == 2
    assert proc.stdout.startswith("::error title=qrspi-guard::args cannot be split")
    assert "exit-code=2" in (tmp_path / "output").read_text()


def test_action_args_are_never_run_as_shell_code(tmp_path: Path) -> None:
    check_step = action()["runs"]["steps"][1]
    proc = run_step(check_step, inputs_with(paths="valid", args=f"$(touch {tmp_path}/pwned)"),
                    tmp_path, {"QRSPI_GUARD_BIN": str(SCRIPT)})
    assert not (tmp_path / "pwned").exists()
    assert proc.returncode == 2  # passed on as a path-like word check refuses
