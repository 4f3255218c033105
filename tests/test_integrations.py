"""The Claude Code plugin, its marketplace and the Gemini CLI extension (issue 31): the
files, and the launcher they run, driven as the runtimes run it (``sh``, the payload on
stdin) against fake guards and the real one. The real runtimes install and run them in
tests/test_runtimes_real.py; their validators pass them in tests/test_integrations_validate.py.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import qrspi_guard
from qrspi_guard.hook.integrations import (
    LAUNCHER,
    MARKETPLACE,
    clone_root,
    integration,
    presence,
    source,
)
from qrspi_guard.hook.runtimes import BY_NAME

ROOT = Path(__file__).resolve().parent.parent
LAUNCHERS = [ROOT / "integrations" / d / LAUNCHER for d in ("claude-code", "gemini-cli")]
VERSION = qrspi_guard.__version__
GUARD_BIN = Path(sys.executable).parent
BAD = "---\nfinding_id: R1-F01\nseverity: urgent\n---\n\nBody.\n"


# -- the files ----------------------------------------------------------------------------


def test_the_launcher_is_one_file_in_two_places_and_executable() -> None:
    a, b = (p.read_bytes() for p in LAUNCHERS)
    assert a == b, "integrations/*/hooks/qrspi-guard-hook differ: copy one over the other"
    for p in LAUNCHERS:
        assert p.stat().st_mode & stat.S_IXUSR
        assert a.startswith(b"#!/bin/sh\n")


def test_every_manifest_and_the_launcher_are_the_packages_version() -> None:
    for rt in BY_NAME.values():
        made = integration(rt.name)
        assert json.loads((ROOT / made.source / made.manifest).read_text())["version"] == VERSION
    market = json.loads((ROOT / MARKETPLACE).read_text())
    assert [(p["name"], p["version"]) for p in market["plugins"]] == [("qrspi-guard", VERSION)]
    assert f"\nVERSION={VERSION}\n" in LAUNCHERS[0].read_text()


def test_the_marketplace_points_at_the_plugin() -> None:
    market = json.loads((ROOT / MARKETPLACE).read_text())
    (entry,) = market["plugins"]
    assert (ROOT / entry["source"]).resolve() == (ROOT / "integrations/claude-code").resolve()
    assert source("claude") == str(ROOT / "integrations" / "claude-code")
    assert source("gemini") == str(ROOT / "integrations" / "gemini-cli")
    assert clone_root() == str(ROOT)


@pytest.mark.parametrize("runtime, directory", [("claude", "claude-code"),
                                                ("gemini", "gemini-cli")])
def test_each_covers_the_events_and_tools_hook_install_covers(runtime: str,
                                                              directory: str) -> None:
    doc = json.loads((ROOT / "integrations" / directory / "hooks" / "hooks.json").read_text())
    rt = BY_NAME[runtime]
    got = {(name, hook["command"].rsplit(" ", 1)[1], group["matcher"])
           for name, groups in doc["hooks"].items() for group in groups
           for hook in group["hooks"]}
    assert got == set(rt.install_entries())
    for groups in doc["hooks"].values():
        for group in groups:
            for hook in group["hooks"]:
                assert hook["type"] == "command"
                assert "hooks" in hook["command"] and "qrspi-guard-hook" in hook["command"]
                assert hook["command"].split()[-2] == runtime


# -- the launcher, with fake guards ---------------------------------------------------------


def fake_guard(where: Path, version: str = VERSION, code: int = 2,
               name: str = "qrspi-guard") -> Path:
    """A qrspi-guard that says *version*, counts its --version calls, keeps what the hook
    call read, and answers with *code*."""
    where.mkdir(parents=True, exist_ok=True)
    prog = where / name
    prog.write_text(f"""#!/bin/sh
if [ "$1" = --version ]; then
    echo x >>"{where}/versions"; echo "qrspi-guard, version {version}"; exit 0
fi
cat >"{where}/payload"
printf '%s\\n' "$*" >"{where}/args"
printf '%s\\n' "${{QRSPI_GUARD_PLUGIN_VERSION:-}}" >"{where}/env"
echo "fake out"; echo "fake err" >&2
exit {code}
""")
    prog.chmod(0o755)
    return prog


def payload(tool: str = "Write", path: str = "reviews/design/round-01/a.finding-F01.md",
            cwd: str = "/proj", session: str = "s-1", event: str = "PreToolUse",
            **tool_input: Any) -> bytes:
    key = "command" if tool in ("Bash", "run_shell_command") else "file_path"
    return json.dumps({"session_id": session, "hook_event_name": event, "tool_name": tool,
                       "cwd": cwd, "tool_input": {key: path, "content": "x", **tool_input}}
                      ).encode()


def launch(data: bytes, tmp_path: Path, *args: str, path: str = "/usr/bin:/bin",
           env: dict[str, str] | None = None, runtime: str = "claude", event: str = "pre",
           shell: str = "sh") -> subprocess.CompletedProcess[str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    full = {"PATH": path, "HOME": str(home), "TMPDIR": str(tmp_path)}
    full.update(env or {})
    proc = subprocess.run([shell, str(LAUNCHERS[0]), runtime, event, *args], input=data,
                          env=full, capture_output=True, timeout=60)
    return subprocess.CompletedProcess(proc.args, proc.returncode, proc.stdout.decode(),
                                       proc.stderr.decode())


def test_a_guard_on_path_of_the_same_version_is_run_and_its_answer_passed_on(
        tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    fake_guard(bin_dir)
    data = payload()
    r = launch(data, tmp_path, path=f"{bin_dir}:/usr/bin:/bin")
    assert (r.returncode, r.stdout, r.stderr) == (2, "fake out\n", "fake err\n")
    assert (bin_dir / "payload").read_bytes() == data
    assert (bin_dir / "args").read_text() == "hook --event pre\n"
    assert (bin_dir / "env").read_text() == f"{VERSION}\n"


def test_a_guard_seen_once_is_not_asked_its_version_again_until_it_changes(
        tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    prog = fake_guard(bin_dir, code=0)
    for _ in range(3):
        assert launch(payload(), tmp_path, path=f"{bin_dir}:/usr/bin:/bin").returncode == 0
    assert (bin_dir / "versions").read_text() == "x\n"
    prog.unlink()
    fake_guard(bin_dir, code=0)  # reinstalled: another file
    assert launch(payload(), tmp_path, path=f"{bin_dir}:/usr/bin:/bin").returncode == 0
    assert (bin_dir / "versions").read_text() == "x\nx\n"


def test_the_configured_guard_comes_before_path(tmp_path: Path) -> None:
    on_path, configured = tmp_path / "p", tmp_path / "c"
    fake_guard(on_path, code=0)
    prog = fake_guard(configured, code=2)
    for var in ("CLAUDE_PLUGIN_OPTION_GUARD", "QRSPI_GUARD"):
        r = launch(payload(), tmp_path, path=f"{on_path}:/usr/bin:/bin", env={var: str(prog)})
        assert r.returncode == 2 and (configured / "payload").exists()
    assert not (on_path / "payload").exists()


def test_a_relative_path_entry_never_chooses_the_program(tmp_path: Path) -> None:
    planted = tmp_path / "work" / "bin"
    fake_guard(planted, code=0)
    home = tmp_path / "home"
    home.mkdir()
    proc = subprocess.run(["sh", str(LAUNCHERS[0]), "claude", "pre"], input=payload(),
                          cwd=tmp_path / "work", capture_output=True, timeout=60,
                          env={"PATH": "bin:/usr/bin:/bin", "HOME": str(home),
                               "TMPDIR": str(tmp_path)})
    assert proc.returncode == 2 and not (planted / "payload").exists()
    assert b"no qrspi-guard on PATH" in proc.stderr
    r = launch(payload(), tmp_path, env={"QRSPI_GUARD": "bin/qrspi-guard"})
    assert r.returncode == 2 and "not an absolute path" in r.stderr


@pytest.mark.parametrize("kind", ["older", "newer"])
def test_a_guard_of_another_version_is_not_run_and_the_refusal_says_which_it_is(
        tmp_path: Path, kind: str) -> None:
    other = "0.0.1" if kind == "older" else "99.0"
    bin_dir = tmp_path / "bin"
    fake_guard(bin_dir, version=other, code=0)
    r = launch(payload(), tmp_path, path=f"{bin_dir}:/usr/bin:/bin")
    assert r.returncode == 2 and not (bin_dir / "payload").exists()
    assert f"{bin_dir}/qrspi-guard is qrspi-guard {other}, not {VERSION}" in r.stderr


@pytest.mark.parametrize("code", [1, 86, 126, 127])
def test_a_guard_that_breaks_at_run_time_falls_back_to_refusing_review_writes(
        tmp_path: Path, code: int) -> None:
    bin_dir = tmp_path / "bin"
    fake_guard(bin_dir, code=code)
    r = launch(payload(), tmp_path, path=f"{bin_dir}:/usr/bin:/bin")
    assert r.returncode == 2 and "fake" not in r.stdout + r.stderr
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("qrspi-guard refused this write")
    outside = launch(payload(path="notes.md", session="other"), tmp_path,
                     path=f"{bin_dir}:/usr/bin:/bin")
    assert outside.returncode == 0 and "fake" not in outside.stdout
    assert (bin_dir / "versions").read_text().count("x") == 2  # not remembered as working


# -- the launcher with no working guard ----------------------------------------------------


@pytest.mark.parametrize("runtime, tool, path", [
    ("claude", "Write", "reviews/design/round-01/quality-claude.finding-F01.md"),
    ("claude", "Edit", "/proj/reviews/tasks/task-01/round-02/x.md"),
    ("claude", "MultiEdit", "reviews/design/round-01/x.md"),
    ("claude", "NotebookEdit", "reviews/design/round-01/x.ipynb"),
    ("gemini", "write_file", "/proj/reviews/design/round-03/x.md"),
    ("gemini", "replace", "reviews/design/round-03/x.md"),
])
def test_with_no_guard_a_write_into_a_review_round_is_refused_with_how_to_install(
        tmp_path: Path, runtime: str, tool: str, path: str) -> None:
    r = launch(payload(tool, path), tmp_path, runtime=runtime)
    assert (r.returncode, r.stdout) == (2, "")
    (line,) = r.stderr.splitlines()
    assert line.startswith("qrspi-guard refused this write into a review round: "
                           f"qrspi-guard {VERSION} cannot be run (no qrspi-guard on PATH)")
    assert f"install qrspi-guard {VERSION}" in line
    assert ("claude plugin configure" if runtime == "claude" else "QRSPI_GUARD=") in line


@pytest.mark.parametrize("tool, command, cwd", [
    ("Bash", "cat > reviews/design/round-01/a.md <<EOF\nx\nEOF", "/proj"),
    ("Bash", "echo \"x\" | tee 'reviews/x'", "/proj"),
    ("run_shell_command", "cd reviews && ls", "/proj"),
    ("Bash", "echo x > a.md", "/proj/reviews/design/round-01"),
])
def test_with_no_guard_a_shell_command_naming_reviews_is_refused(
        tmp_path: Path, tool: str, command: str, cwd: str) -> None:
    r = launch(payload(tool, command, cwd=cwd), tmp_path,
               runtime="gemini" if tool.startswith("run") else "claude")
    assert r.returncode == 2
    assert r.stderr.startswith("qrspi-guard refused this shell command (it names a reviews/ path)")


@pytest.mark.parametrize("data", [
    payload("Write", "notes.md", content="see reviews/design/round-01/x.md"),
    payload("Write", "previews/design/round-01/x.md"),
    payload("Bash", "echo reviewsx; ls previews/"),
    payload("Read", "reviews/design/round-01/x.md"),
    payload("Write", "reviews/design/notes.md"),
    json.dumps({"tool_name": "Write", "tool_input": {
        "content": "\\\"file_path\\\": \"reviews/design/round-01/x.md\"",
        "file_path": "elsewhere.md"}}).encode(),
    b"not json at all",
    b"",
])
def test_with_no_guard_every_other_call_is_allowed(tmp_path: Path, data: bytes) -> None:
    r = launch(data, tmp_path)
    assert r.returncode == 0 and r.stderr == ""


def test_with_no_guard_nothing_is_refused_after_the_call(tmp_path: Path) -> None:
    r = launch(payload(event="PostToolUse"), tmp_path, event="post")
    assert r.returncode == 0


def test_with_no_guard_the_user_is_told_once_a_session(tmp_path: Path) -> None:
    first = launch(payload("Write", "notes.md", session="a"), tmp_path)
    told = json.loads(first.stdout)["systemMessage"]
    assert first.returncode == 0 and told.startswith(
        f"qrspi-guard: qrspi-guard {VERSION} cannot be run (no qrspi-guard on PATH): "
        "writes into review rounds are refused until it can; install")
    assert launch(payload("Write", "notes.md", session="a"), tmp_path).stdout == ""
    assert "systemMessage" in launch(payload("Write", "notes.md", session="b"), tmp_path).stdout


def test_the_notice_is_json_whatever_the_configured_path_holds(tmp_path: Path) -> None:
    r = launch(payload("Write", "notes.md"), tmp_path,
               env={"QRSPI_GUARD": '/no/"such\\thing\x1b[31m'})
    told = json.loads(r.stdout)["systemMessage"]
    assert '/no/"such\\thing[31m is not an executable file' in told and "\x1b" not in told


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_the_launcher_keeps_to_posix_sh_under_bash_posix(tmp_path: Path) -> None:
    r = launch(payload(), tmp_path, shell="bash")
    assert r.returncode == 2 and r.stderr.startswith("qrspi-guard refused this write")
    proc = subprocess.run(["bash", "--posix", "-n", str(LAUNCHERS[0])], capture_output=True)
    assert proc.returncode == 0, proc.stderr


# -- the launcher with the real guard -------------------------------------------------------


def test_the_real_guard_refuses_a_malformed_finding_through_the_launcher(tmp_path: Path) -> None:
    rnd = tmp_path / "reviews" / "design" / "round-01"
    rnd.mkdir(parents=True)
    data = json.dumps({"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Write",
                       "cwd": str(tmp_path), "tool_input": {
                           "file_path": str(rnd / "quality-claude.finding-F01.md"),
                           "content": BAD}}).encode()
    r = launch(data, tmp_path, path=f"{GUARD_BIN}:/usr/bin:/bin")
    assert r.returncode == 2 and r.stderr.startswith("qrspi-guard refused this write: ")
    assert "severity_out_of_enum" in r.stderr
    ok = launch(payload("Write", str(tmp_path / "notes.md")), tmp_path,
                path=f"{GUARD_BIN}:/usr/bin:/bin")
    assert (ok.returncode, ok.stdout, ok.stderr) == (0, "", "")


def test_a_guard_whose_version_changed_since_it_was_seen_says_so_itself(tmp_path: Path) -> None:
    """An editable install updated in place: the launcher remembers the program, the
    program no longer is that version; it exits 86 unread, and the launcher looks on."""
    proc = subprocess.run([str(GUARD_BIN / "qrspi-guard"), "hook"], input=payload(),
                          env={**os.environ, "QRSPI_GUARD_PLUGIN_VERSION": "0.0.0-other"},
                          capture_output=True, timeout=60)
    assert (proc.returncode, proc.stdout, proc.stderr) == (86, b"", b"")


# -- where they are installed -------------------------------------------------------------


def test_presence_reads_each_runtimes_records(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert not presence("claude", str(home), {}).installed
    assert not presence("gemini", str(home), {}).installed
    plugins = home / ".claude" / "plugins"
    plugins.mkdir(parents=True)
    (plugins / "installed_plugins.json").write_text(json.dumps({"version": 2, "plugins": {
        "qrspi-guard@qrspi-guard": [{"scope": "user", "version": "0.2.0",
                                     "installPath": "/x/cache/0.2.0"}]}}))
    got = presence("claude", str(home), {})
    assert (got.installed, got.version, got.where, got.enabled) == (
        True, "0.2.0", "/x/cache/0.2.0", True)
    project = tmp_path / "proj"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "settings.json").write_text(
        json.dumps({"enabledPlugins": {"qrspi-guard@qrspi-guard": False}}))
    assert presence("claude", str(home), {}, str(project)).enabled is False
    ext = home / ".gemini" / "extensions" / "qrspi-guard"
    ext.mkdir(parents=True)
    (ext / "gemini-extension.json").write_text(json.dumps({"name": "qrspi-guard",
                                                          "version": "0.2.0"}))
    assert presence("gemini", str(home), {}).version == "0.2.0"
    other = tmp_path / "gh"
    assert not presence("gemini", str(home), {"GEMINI_CLI_HOME": str(other)}).installed
    with pytest.raises(ValueError):
        presence("codex", str(home), {})


def test_guard_found_asks_the_launcher_with_what_the_runtime_would_give_it(
        tmp_path: Path) -> None:
    from qrspi_guard.hook.integrations import guard_found

    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    bare = {"PATH": "/usr/bin:/bin"}
    prog, why = guard_found("claude", str(home), bare)
    assert prog is None and why == f"qrspi-guard {VERSION} cannot be run (no qrspi-guard on PATH)"
    assert guard_found("gemini", str(home), {"PATH": f"{GUARD_BIN}:/usr/bin:/bin"}) == (
        f"{GUARD_BIN}/qrspi-guard", "")
    fake = fake_guard(tmp_path / "configured", code=0)
    (home / ".claude" / "settings.json").write_text(json.dumps({"pluginConfigs": {
        "qrspi-guard@qrspi-guard": {"options": {"guard": str(fake)}}}}))
    assert guard_found("claude", str(home), bare) == (str(fake), "")
    old = fake_guard(tmp_path / "old", version="0.0.1")
    prog, why = guard_found("gemini", str(home), {**bare, "QRSPI_GUARD": str(old)})
    assert prog is None and f"{old} is qrspi-guard 0.0.1, not {VERSION}" in why


def test_a_pinned_tool_that_cannot_be_installed_fails_the_gate_and_only_skips_elsewhere(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from tests import npmtools

    monkeypatch.setattr(npmtools, "tools", lambda: "npm is not installed")
    monkeypatch.delenv(npmtools.NEED, raising=False)
    with pytest.raises(pytest.skip.Exception, match="npm is not installed"):
        npmtools.required("the real claude", ".bin", "claude")
    monkeypatch.setenv(npmtools.NEED, "1")
    with pytest.raises(pytest.fail.Exception, match="npm is not installed"):
        npmtools.required("the real claude", ".bin", "claude")
