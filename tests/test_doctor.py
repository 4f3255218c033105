"""`qrspi-guard doctor`: what is in place and what is not, and its exit code (0 healthy,
1 something required missing or anything broken), through the installed console
script with a home directory of the test's own."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from tests.adoptkit import KNOWN, adopt, checkout
from tests.support import REPO, SCRIPT, run_cli


def _doctor(tmp_path: Path, *args: str, cwd: Path | None = None,
            ) -> tuple[int, dict[tuple[str, str], dict[str, Any]], bytes]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    proc = run_cli("doctor", "--known", str(KNOWN), *args, "--format", "json",
                   cwd=cwd or tmp_path,
                   env={"HOME": str(home), "PATH": f"{SCRIPT.parent}:{os.environ['PATH']}"})
    assert proc.returncode in (0, 1), proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["healthy"] is (proc.returncode == 0)
    return proc.returncode, {(i["section"], i["what"]): i for i in doc["items"]}, proc.stdout


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    return project


def test_a_fresh_checkout_without_a_hook_is_not_in_place(tmp_path: Path) -> None:
    co = checkout(tmp_path)
    code, items, _ = _doctor(tmp_path, str(co), "--project", str(_project(tmp_path)))
    assert code == 1
    assert items[("guard", f"qrspi-guard {_version()}")]["detail"] == f"at {SCRIPT}"
    fan_in = items[("scripts", "scripts/verifier-fan-in.sh")]
    assert fan_in["state"] == "no" and "not adopted" in fan_in["detail"]
    assert items[("hook", "agent hook")]["state"] == "no"


def _version() -> str:
    from qrspi_guard import __version__

    return __version__


def test_an_adopted_checkout_with_a_hook_is_healthy_and_says_what_runs(tmp_path: Path) -> None:
    co, project = checkout(tmp_path), _project(tmp_path)
    assert adopt(co, "--hook", "claude", "--halt-on", "upstream",
                 "--project", str(project)).returncode == 0
    code, items, _ = _doctor(tmp_path, str(co), "--project", str(project))
    assert code == 0
    assert items[("scripts", "scripts/verifier-fan-in.sh")]["detail"] == \
        "adopted: qrspi-guard fan-in --halt-on upstream"
    claude = next(v for k, v in items.items() if k[1].startswith("Claude Code, project"))
    assert claude["state"] == "ok" and claude["detail"] == "installed: runs this qrspi-guard"
    text = run_cli("doctor", str(co), "--project", str(project),
                   env={"HOME": str(tmp_path / "home")})
    assert text.returncode == 0 and text.stdout.endswith(b"in place\n")
    assert len(text.stdout.splitlines()) <= 24  # one screen


def test_a_guard_gone_since_adoption_is_broken(tmp_path: Path) -> None:
    co, project = checkout(tmp_path), _project(tmp_path)
    bindir = tmp_path / "old-bin"
    bindir.mkdir()
    old = bindir / "qrspi-guard"
    shutil.copy2(SCRIPT, old)
    assert subprocess.run([str(old), "adopt", str(co), "--known", str(KNOWN), "--hook",
                           "claude", "--project", str(project)],
                          capture_output=True).returncode == 0
    old.unlink()
    code, items, _ = _doctor(tmp_path, str(co), "--project", str(project))
    assert code == 1
    fan_in = items[("scripts", "scripts/verifier-fan-in.sh")]
    assert fan_in["state"] == "bad"
    assert f"the guard it runs is gone: {old}" in fan_in["detail"]
    claude = next(v for k, v in items.items() if k[1].startswith("Claude Code, project"))
    assert claude["state"] == "bad" and "which is gone" in claude["detail"]


def test_hand_written_wrappers_and_unknown_versions_are_told_apart(tmp_path: Path) -> None:
    co, project = checkout(tmp_path), _project(tmp_path)
    (co / "scripts/await-round.sh").write_text('#!/usr/bin/env bash\nexec qrspi-guard await "$@"\n')
    (co / "scripts/round-prepare.sh").write_text("#!/usr/bin/env bash\necho mine\n")
    assert run_cli("hook", "install", cwd=project).returncode == 0
    code, items, _ = _doctor(tmp_path, str(co), "--project", str(project))
    assert code == 1  # two scripts not adopted
    assert items[("scripts", "scripts/await-round.sh")]["state"] == "warn"
    assert "written by hand" in items[("scripts", "scripts/await-round.sh")]["detail"]
    prepare = items[("scripts", "scripts/round-prepare.sh")]
    assert prepare["state"] == "no" and "a version adopt does not know" in prepare["detail"]


def test_the_plugin_counts_as_a_hook_in_place(tmp_path: Path) -> None:
    co, project = checkout(tmp_path), _project(tmp_path)
    assert adopt(co).returncode == 0
    # as `claude plugin install` records it, from this clone, with this guard on PATH
    plugins = tmp_path / "home" / ".claude" / "plugins"
    plugins.mkdir(parents=True)
    (plugins / "installed_plugins.json").write_text(json.dumps({"version": 2, "plugins": {
        "qrspi-guard@qrspi-guard": [{"scope": "user", "version": _version(),
                                     "installPath": str(REPO / "integrations" / "claude-code")}]}}))
    code, items, _ = _doctor(tmp_path, str(co), "--project", str(project))
    plugin = items[("plugin", "Claude Code plugin")]
    assert plugin["state"] == "ok" and str(SCRIPT) in plugin["detail"], plugin
    assert ("hook", "agent hook") not in items and code == 0
    (project / ".claude").mkdir()
    (project / ".claude/settings.json").write_text(
        '{"enabledPlugins": {"qrspi-guard@qrspi-guard": false}}')
    code, items, _ = _doctor(tmp_path, str(co), "--project", str(project))
    assert items[("plugin", "Claude Code plugin")]["state"] == "no" and code == 1


def test_broken_settings_pre_commit_entry_and_baseline_are_named(tmp_path: Path) -> None:
    co, project = checkout(tmp_path), _project(tmp_path)
    assert adopt(co, "--hook", "claude", "--project", str(project)).returncode == 0
    (project / ".gemini").mkdir()
    (project / ".gemini/settings.json").write_text("{")
    (project / ".pre-commit-config.yaml").write_text(
        "repos:\n- repo: local\n  hooks:\n  - id: qrspi-guard-all\n    name: g\n"
        "    entry: /gone/qrspi-guard check --baseline b.json\n    language: system\n")
    code, items, _ = _doctor(tmp_path, str(co), "--project", str(project))
    assert code == 1
    gemini = next(v for k, v in items.items() if k[1].startswith("Gemini CLI, project"))
    assert gemini["state"] == "bad" and "does not parse as JSON" in gemini["detail"]
    entry = next(v for k, v in items.items() if k[0] == "pre-commit")
    assert entry["state"] == "bad" and "runs /gone/qrspi-guard, which is gone" in entry["detail"]
    baseline = next(v for k, v in items.items() if k[0] == "baseline")
    assert baseline["state"] == "bad" and "b.json" in baseline["detail"]


def test_doctor_in_a_project_that_is_no_checkout_does_not_require_one(tmp_path: Path) -> None:
    project = _project(tmp_path)
    assert run_cli("hook", "install", cwd=project).returncode == 0
    code, items, _ = _doctor(tmp_path, cwd=project)
    assert code == 0
    assert items[("scripts", "upstream checkout")]["required"] is False


RECORDS = {"Claude Code plugin": Path(".claude", "plugins", "installed_plugins.json"),
           "Gemini CLI extension": Path(".gemini", "extensions", "qrspi-guard",
                                        "gemini-extension.json")}


def test_a_runtimes_record_that_is_a_fifo_is_never_waited_on_and_is_named(
        tmp_path: Path) -> None:
    """The plugin's and the extension's records are read without waiting (before, doctor
    waited forever for a writer on a FIFO), and a record that is there but cannot be read
    is broken, named with its path, not "not installed"."""
    home = tmp_path / "home"
    for path in RECORDS.values():
        (home / path).parent.mkdir(parents=True)
        os.mkfifo(home / path)
    proc = run_cli("doctor", "--format", "json", cwd=_project(tmp_path), timeout=30,
                   env={"HOME": str(home)})
    assert proc.returncode == 1, proc.stderr
    items = {(i["section"], i["what"]): i for i in json.loads(proc.stdout)["items"]}
    for what, path in RECORDS.items():
        item = items[("plugin", what)]
        assert item["state"] == "bad"
        assert item["detail"] == f"cannot read {home / path}: not a regular file"


def test_a_runtimes_record_it_cannot_parse_is_broken_and_says_why(tmp_path: Path) -> None:
    home = tmp_path / "home"
    for path in RECORDS.values():
        (home / path).parent.mkdir(parents=True)
        (home / path).write_text('{"plugins": {"qrspi-guard@x": [{"version": NaN}]}}')
    code, items, _ = _doctor(tmp_path, "--project", str(_project(tmp_path)))
    assert code == 1
    for what, path in RECORDS.items():
        detail = items[("plugin", what)]["detail"]
        assert items[("plugin", what)]["state"] == "bad"
        assert detail.startswith(f"cannot read {home / path}: "), detail
        assert "NaN" in detail, detail
