"""`qrspi-guard hook install` / `uninstall`, through the console script.

Layouts, as documented: Claude Code settings ``hooks.<Event>`` is a list of
``{"matcher", "hooks": [{"type": "command", "command"}]}``; Gemini CLI's hook
definitions are the same shape, and a hook configuration also takes ``name`` and
``timeout`` (milliseconds, default 60000) (geminicli.com/docs/hooks/reference).
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from qrspi_guard.hook.install import merge, unmerge
from tests.support import SCRIPT, run_main

#: what install writes by default: this qrspi-guard by its absolute path
PRE = f"{SCRIPT} hook --event pre"
POST = f"{SCRIPT} hook --event post"

OTHER_HOOK = {"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]}


def cli(cwd: Path, *args: str) -> tuple[int, str, str]:
    home = cwd / "home"
    home.mkdir(exist_ok=True)
    proc = run_main("hook", *args, cwd=cwd, env={"HOME": str(home)})
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def settings(cwd: Path, runtime: str = "claude") -> Path:
    return cwd / f".{runtime}" / "settings.json"


def read(path: Path) -> Any:
    return json.loads(path.read_text())


def test_install_creates_the_claude_settings_file_with_pre_and_post_hooks(
        tmp_path: Path) -> None:
    code, out, err = cli(tmp_path, "install")
    assert code == 0, err
    assert "installed in" in out and "PreToolUse, PostToolUse" in out
    assert read(settings(tmp_path)) == {"hooks": {
        "PreToolUse": [{"matcher": "Write|Edit|MultiEdit|Bash", "hooks": [
            {"type": "command", "command": PRE}]}],
        "PostToolUse": [{"matcher": "Write|Edit|MultiEdit|Bash", "hooks": [
            {"type": "command", "command": POST}]}]}}
    assert not (tmp_path / ".claude" / "settings.json.qrspi-guard.bak").exists()


def test_install_for_gemini_names_each_hook_and_gives_a_millisecond_timeout(
        tmp_path: Path) -> None:
    assert cli(tmp_path, "install", "--runtime", "gemini")[0] == 0
    doc = read(settings(tmp_path, "gemini"))
    before = doc["hooks"]["BeforeTool"][0]
    after = doc["hooks"]["AfterTool"][0]
    assert before["matcher"] == "write_file|replace|run_shell_command"
    assert after["matcher"] == "write_file|replace|run_shell_command"
    assert before["hooks"][0]["name"] == "qrspi-guard-pre"
    assert before["hooks"][0]["timeout"] == 10000
    assert after["hooks"][0]["command"] == POST


def test_install_merges_keeping_every_other_setting_and_hook(tmp_path: Path) -> None:
    path = settings(tmp_path)
    path.parent.mkdir()
    original = {"model": "opus", "permissions": {"allow": ["Bash(ls:*)"]},
                "hooks": {"PreToolUse": [OTHER_HOOK], "Stop": [OTHER_HOOK]}}
    path.write_text(json.dumps(original))
    code, out, _ = cli(tmp_path, "install")
    assert code == 0 and "the old file is" in out
    doc = read(path)
    assert doc["model"] == "opus" and doc["permissions"] == original["permissions"]
    assert doc["hooks"]["PreToolUse"][0] == OTHER_HOOK and len(doc["hooks"]["PreToolUse"]) == 2
    assert doc["hooks"]["Stop"] == [OTHER_HOOK]
    backup = path.with_name("settings.json.qrspi-guard.bak")
    assert json.loads(backup.read_text()) == original


def test_install_is_idempotent(tmp_path: Path) -> None:
    cli(tmp_path, "install")
    first = settings(tmp_path).read_bytes()
    code, out, _ = cli(tmp_path, "install")
    assert code == 0 and "already installed" in out
    assert settings(tmp_path).read_bytes() == first
    assert not (tmp_path / ".claude" / "settings.json.qrspi-guard.bak").exists()


def test_uninstall_removes_exactly_what_install_added(tmp_path: Path) -> None:
    path = settings(tmp_path, "gemini")
    path.parent.mkdir()
    original = {"ui": {"theme": "dark"},
                "hooks": {"disabled": ["noisy"], "BeforeTool": [OTHER_HOOK]}}
    path.write_text(json.dumps(original))
    assert cli(tmp_path, "install", "--runtime", "gemini")[0] == 0
    assert read(path)["hooks"]["disabled"] == ["noisy"]
    code, out, _ = cli(tmp_path, "uninstall", "--runtime", "gemini")
    assert code == 0 and "removed from" in out
    assert read(path) == original
    code, out, _ = cli(tmp_path, "uninstall", "--runtime", "gemini")
    assert code == 0 and "not installed" in out


def test_uninstall_keeps_other_hooks_sharing_a_group_with_ours() -> None:
    doc: dict[str, Any] = {}
    merge(doc, "claude")
    doc["hooks"]["PreToolUse"][0]["hooks"].append({"type": "command", "command": "fmt.sh"})
    assert unmerge(doc, "claude") == ["PreToolUse", "PostToolUse"]
    assert doc == {"hooks": {"PreToolUse": [{"matcher": "Write|Edit|MultiEdit|Bash", "hooks": [
        {"type": "command", "command": "fmt.sh"}]}]}}


def test_user_scope_writes_under_the_home_directory(tmp_path: Path) -> None:
    assert cli(tmp_path, "install", "--scope", "user")[0] == 0
    assert (tmp_path / "home" / ".claude" / "settings.json").is_file()
    assert not settings(tmp_path).exists()


def test_dry_run_prints_the_merged_file_and_writes_nothing(tmp_path: Path) -> None:
    code, out, _ = cli(tmp_path, "install", "--dry-run")
    assert code == 0 and json.loads(out)["hooks"]["PreToolUse"]
    assert not (tmp_path / ".claude").exists()


@pytest.mark.parametrize("text, words", [
    ("{\"hooks\": {", "does not parse as JSON"),
    ("// a comment\n{}", "does not parse as JSON"),
    ("[]", "not an object"),
    ("{\"hooks\": []}", "\"hooks\" is not an object"),
    ("{\"hooks\": {\"PreToolUse\": {}}}", "\"hooks.PreToolUse\" is not a list"),
    # JSON the guard does not read (issue 29): rewritten, the first "model" would be
    # dropped without a word, and NaN written back where no runtime can read it
    ("{\"model\": \"opus\", \"model\": \"sonnet\"}", "the key 'model' appears twice"),
    ("{\"cleanupPeriodDays\": NaN}", "NaN is not JSON"),
    ("{\"x\": " + "[" * 70 + "]" * 70 + "}", "nested more than 64 levels deep"),
])
def test_a_settings_file_that_does_not_parse_is_left_alone_with_exit_2(
        tmp_path: Path, text: str, words: str) -> None:
    path = settings(tmp_path)
    path.parent.mkdir()
    path.write_text(text)
    for verb in ("install", "uninstall"):
        code, out, err = cli(tmp_path, verb)
        assert code == 2 and out == ""
        assert err.startswith("qrspi-guard hook: error: ") and words in err
        assert err.count("\n") == 1
    assert path.read_text() == text
    assert sorted(p.name for p in path.parent.iterdir()) == ["settings.json"]


def test_a_symlinked_settings_file_is_left_alone_with_exit_2(tmp_path: Path) -> None:
    real = tmp_path / "shared-settings.json"
    real.write_text("{}")
    settings(tmp_path).parent.mkdir()
    settings(tmp_path).symlink_to(real)
    code, _, err = cli(tmp_path, "install")
    assert code == 2 and "is a symbolic link" in err
    assert settings(tmp_path).is_symlink() and real.read_text() == "{}"


def test_a_read_only_settings_file_is_left_alone_with_exit_2(tmp_path: Path) -> None:
    path = settings(tmp_path)
    path.parent.mkdir()
    path.write_text("{}")
    path.chmod(0o444)
    code, _, err = cli(tmp_path, "install")
    assert code == 2 and "is read-only" in err
    assert path.read_text() == "{}"
    assert sorted(p.name for p in path.parent.iterdir()) == ["settings.json"]


def test_a_settings_file_keeps_its_mode(tmp_path: Path) -> None:
    path = settings(tmp_path)
    path.parent.mkdir()
    path.write_text("{}")
    path.chmod(0o600)
    assert cli(tmp_path, "install")[0] == 0
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


def test_an_unwritable_directory_leaves_no_partial_file(tmp_path: Path) -> None:
    (tmp_path / ".claude").write_text("not a directory")
    code, _, err = cli(tmp_path, "install")
    assert code == 2 and "Not a directory" in err and err.count("\n") == 1
    assert (tmp_path / ".claude").read_text() == "not a directory"


def test_install_options_are_checked_like_any_command(tmp_path: Path) -> None:
    code, _, err = cli(tmp_path, "install", "--runtime", "codex")
    assert code == 2 and "--runtime" in err and err.count("\n") == 1


def test_install_writes_a_command_that_runs_without_qrspi_guard_on_path(tmp_path: Path) -> None:
    """The README installs into .venv, not on PATH: the hook command must still run."""
    import subprocess

    from tests.support import run_cli

    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}
    proc = run_cli("hook", "install", cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == b""  # no "not on PATH" warning: nothing to warn about
    doc = read(settings(tmp_path))
    command = doc["hooks"]["PostToolUse"][0]["hooks"][0]["command"]
    assert command == POST
    payload = json.dumps({"hook_event_name": "PostToolUse", "tool_name": "Bash",
                          "cwd": str(tmp_path), "tool_input": {"command": "git status"}})
    ran = subprocess.run(["sh", "-c", command], input=payload.encode(), env=env,
                         capture_output=True, timeout=60)
    assert ran.returncode == 0, ran.stderr  # not 127


def test_install_command_names_the_program_and_a_reinstall_updates_it(tmp_path: Path) -> None:
    prog = '"$CLAUDE_PROJECT_DIR"/.venv/bin/qrspi-guard'
    assert cli(tmp_path, "install", "--command", prog)[0] == 0
    doc = read(settings(tmp_path))
    assert doc["hooks"]["PreToolUse"][0]["hooks"][0]["command"] == f"{prog} hook --event pre"
    code, out, _ = cli(tmp_path, "install")
    assert code == 0 and "installed in" in out
    doc = read(settings(tmp_path))
    assert [g["hooks"][0]["command"] for g in doc["hooks"]["PreToolUse"]] == [PRE]
    assert "already installed" in cli(tmp_path, "install")[1]
    assert cli(tmp_path, "uninstall")[0] == 0
    assert not settings(tmp_path).read_text().count("hook --event")


def test_a_bare_command_from_an_older_install_counts_as_ours() -> None:
    doc: dict[str, Any] = {"hooks": {"PreToolUse": [{"matcher": "Write", "hooks": [
        {"type": "command", "command": "qrspi-guard hook --event pre"}]}]}}
    assert unmerge(doc, "claude") == ["PreToolUse"] and doc == {}
