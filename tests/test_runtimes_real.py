"""The hook inside the real runtimes (issue 31): Claude Code and Gemini CLI, at the
versions tests/npm pins, each driven by a scripted model on 127.0.0.1
(tests/agentmodel.py, tests/runtimes.py). The suite's other hook tests feed the hook
payloads they wrote themselves; these show that the runtimes send what the hook reads,
and that its answers reach the model (and the user) as the runtime delivers them.

One script plays a reviewer: a malformed Write, an Edit that would break a valid
finding, a shell command writing a malformed finding, a valid finding, and a note
outside the review rounds. Each way in runs it once: ``hook install`` (Claude Code also
in the JSON form), the plugin and the extension installed offline from this checkout,
the plugin and the extension with no guard to run, and a hook command with a typo.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

import qrspi_guard
from tests.agentmodel import Step
from tests.npmtools import required
from tests.runtimes import Claude, Gemini, Outcome
from tests.support import run_main

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
GUARD_BIN = str(Path(sys.executable).parent)
BASE_PATH = "/usr/local/bin:/usr/bin:/bin"
VERSION = qrspi_guard.__version__


def finding(n: int, severity: str = "high") -> str:
    return (f"---\nfinding_id: R1-F{n:02d}\nseverity: {severity}\nchange_type: correctness\n"
            f"referenced_files: [design.md:L10-L20]\nartifact: design\nround: 1\n"
            f"reviewer: quality-claude\n---\n\nThe design drops the retry path; restore it.\n")


def name(n: int) -> str:
    return f"quality-claude.finding-F{n:02d}.md"


ROUND = "reviews/design/round-01"


@pytest.fixture(scope="module")
def clis() -> dict[str, Path]:
    found = {}
    for runtime, parts in (("claude", (".bin", "claude")), ("gemini", (".bin", "gemini"))):
        found[runtime] = required(f"the real {runtime}", *parts)
    return found


def project(tmp_path: Path, label: str) -> Path:
    p = tmp_path / label / "proj"
    (p / ROUND).mkdir(parents=True)
    (p / ROUND / name(2)).write_text(finding(2))
    return p


def reviewer(rt: Claude | Gemini, p: Path) -> list[Step]:
    """The reviewer's five calls, in *rt*'s tool names."""
    rnd = p / ROUND
    edit_args = {"file_path": str(rnd / name(2)), "old_string": "severity: high",
                 "new_string": "severity: urgent", **rt.edit_extra}
    shell = f"printf '%s' '{finding(3, 'urgent')}' > {ROUND}/{name(3)}"
    return [Step(rt.write, {"file_path": str(rnd / name(1)), "content": finding(1, "urgent")}),
            Step(rt.edit, edit_args),
            Step(rt.shell, {"command": shell}),
            Step(rt.write, {"file_path": str(rnd / name(4)), "content": finding(4)}),
            Step(rt.write, {"file_path": str(p / "notes.md"), "content": "reviews/ notes\n"})]


def assert_guarded(out: Outcome, p: Path) -> None:
    """The five calls of :func:`reviewer`, judged as the guard judges them."""
    assert out.code == 0, out.stdout[-2000:] + out.stderr[-2000:]
    write, edit, shell, valid, outside = (out.result(i) for i in range(5))
    assert write.count("qrspi-guard refused this write") == 1, write
    assert "severity_out_of_enum" in write and not (p / ROUND / name(1)).exists()
    assert edit.count("qrspi-guard refused this edit") == 1, edit
    assert (p / ROUND / name(2)).read_text() == finding(2)
    assert shell.count("after your command, review round(s) design/round-01 halt") == 1, shell
    assert "severity_out_of_enum" in shell and (p / ROUND / name(3)).exists()
    assert "qrspi-guard" not in valid and (p / ROUND / name(4)).read_text() == finding(4)
    assert "qrspi-guard" not in outside and (p / "notes.md").exists()


def install_hook(p: Path, runtime: str, *extra: str) -> str:
    proc = run_main("hook", "install", "--runtime", runtime, cwd=p,
                    env={"HOME": str(p.parent / "home-install")})
    assert proc.returncode == 0, proc.stderr
    settings = p / (".claude" if runtime == "claude" else ".gemini") / "settings.json"
    if extra:
        text = settings.read_text()
        for event in ("pre", "post"):
            text = text.replace(f"--event {event}\"", f"--event {event} {' '.join(extra)}\"")
        settings.write_text(text)
    return proc.stderr.decode()


# -- Claude Code ------------------------------------------------------------------------------


@pytest.mark.parametrize("form", ["text", "json"])
def test_claude_code_with_hook_install_refuses_each_malformed_write_once(
        clis: dict[str, Path], tmp_path: Path, form: str) -> None:
    p = project(tmp_path, form)
    install_hook(p, "claude", *(["--output-format", "json"] if form == "json" else []))
    rt = Claude(clis["claude"], tmp_path / form / "home", BASE_PATH)
    assert_guarded(rt.run(p, reviewer(rt, p)), p)


def test_claude_code_plugin_installed_offline_guards_the_same(clis: dict[str, Path],
                                                             tmp_path: Path) -> None:
    p = project(tmp_path, "plugin")
    rt = Claude(clis["claude"], tmp_path / "plugin" / "home", BASE_PATH)
    rt.install_plugin(ROOT, p, f"guard={GUARD_BIN}/qrspi-guard")
    assert not (p / ".claude").exists()
    assert_guarded(rt.run(p, reviewer(rt, p)), p)
    from qrspi_guard.hook.integrations import guard_found, presence

    got = presence("claude", str(rt.home), {}, str(p))
    assert (got.installed, got.version, got.enabled) == (True, VERSION, True)
    # what doctor asks: the guard the installed plugin finds, with its configured option
    assert guard_found("claude", str(rt.home), {"PATH": BASE_PATH}, str(p)) == (
        f"{GUARD_BIN}/qrspi-guard", "")


def missing_guard_script(rt: Claude | Gemini, p: Path) -> list[Step]:
    return [Step(rt.write, {"file_path": str(p / ROUND / name(4)), "content": finding(4)}),
            Step(rt.shell, {"command": f"cat {ROUND}/{name(2)} > {ROUND}/{name(5)}"}),
            Step(rt.write, {"file_path": str(p / "notes.md"), "content": "x\n"})]


def assert_missing_guard(rt: Claude | Gemini, out: Outcome, p: Path) -> None:
    assert out.code == 0, out.stdout[-2000:] + out.stderr[-2000:]
    write, shell, outside = (out.result(i) for i in range(3))
    assert "qrspi-guard refused this write into a review round: " \
        f"qrspi-guard {VERSION} cannot be run (no qrspi-guard on PATH)" in write
    assert f"install qrspi-guard {VERSION}" in write and not (p / ROUND / name(4)).exists()
    assert "qrspi-guard refused this shell command" in shell
    assert not (p / ROUND / name(5)).exists()
    assert "qrspi-guard" not in outside and (p / "notes.md").exists()
    told = [n for n in rt.user_notices(out) if "writes into review rounds are refused" in n]
    assert len(told) == 1, rt.user_notices(out)
    assert not out.model_saw("writes into review rounds are refused until it can")


def test_claude_code_plugin_with_no_guard_refuses_review_writes_and_tells_the_user(
        clis: dict[str, Path], tmp_path: Path) -> None:
    p = project(tmp_path, "missing")
    rt = Claude(clis["claude"], tmp_path / "missing" / "home", BASE_PATH)
    rt.install_plugin(ROOT, p)
    assert_missing_guard(rt, rt.run(p, missing_guard_script(rt, p)), p)


def test_claude_code_with_a_typo_in_the_hook_command_still_guards_and_tells_the_user(
        clis: dict[str, Path], tmp_path: Path) -> None:
    p = project(tmp_path, "typo")
    install_hook(p, "claude", "--evnt")
    rt = Claude(clis["claude"], tmp_path / "typo" / "home", BASE_PATH)
    script = [Step(rt.write, {"file_path": str(p / "notes.md"), "content": "x\n"}),
              Step(rt.write, {"file_path": str(p / ROUND / name(1)),
                              "content": finding(1, "urgent")})]
    out = rt.run(p, script)
    assert "qrspi-guard" not in out.result(0) and (p / "notes.md").exists()
    refusal = out.result(1)
    assert "qrspi-guard hook: cannot use its command line (no such option: --evnt)" in refusal
    assert "severity_out_of_enum" in refusal and not (p / ROUND / name(1)).exists()
    told = [n for n in rt.user_notices(out) if "cannot use its command line" in n]
    assert len(told) == 1, rt.user_notices(out)


# -- Gemini CLI -------------------------------------------------------------------------------


def test_gemini_cli_with_hook_install_in_a_trusted_folder_refuses_each_malformed_write_once(
        clis: dict[str, Path], tmp_path: Path) -> None:
    p = project(tmp_path, "gemini")
    rt = Gemini(clis["gemini"], tmp_path / "gemini" / "home", BASE_PATH)
    rt.trust(p)
    install_hook(p, "gemini")
    assert_guarded(rt.run(p, reviewer(rt, p)), p)


def test_gemini_cli_ignores_a_project_hook_in_an_untrusted_folder_as_install_warns(
        clis: dict[str, Path], tmp_path: Path) -> None:
    p = project(tmp_path, "untrusted")
    rt = Gemini(clis["gemini"], tmp_path / "untrusted" / "home", BASE_PATH)
    proc = run_main("hook", "install", "--runtime", "gemini", cwd=p, env={"HOME": str(rt.home)})
    assert b"Gemini CLI runs a project's hooks only in a trusted folder" in proc.stderr
    out = rt.run(p, reviewer(rt, p)[:1], skip_trust=True)
    assert out.code == 0 and "qrspi-guard" not in out.result(0)
    assert (p / ROUND / name(1)).exists()  # what the warning is about


def test_gemini_cli_extension_installed_offline_guards_the_same(clis: dict[str, Path],
                                                               tmp_path: Path) -> None:
    p = project(tmp_path, "extension")
    rt = Gemini(clis["gemini"], tmp_path / "extension" / "home", f"{GUARD_BIN}:{BASE_PATH}")
    rt.install_extension(ROOT / "integrations" / "gemini-cli", p)
    assert not (p / ".gemini").exists()
    # a user-level extension runs in a folder that is not trusted, too
    assert_guarded(rt.run(p, reviewer(rt, p), skip_trust=True), p)
    from qrspi_guard.hook.integrations import presence

    assert presence("gemini", str(rt.home), {}).version == VERSION


def test_gemini_cli_extension_with_no_guard_refuses_review_writes_and_tells_the_user(
        clis: dict[str, Path], tmp_path: Path) -> None:
    p = project(tmp_path, "gmissing")
    rt = Gemini(clis["gemini"], tmp_path / "gmissing" / "home", BASE_PATH)
    rt.install_extension(ROOT / "integrations" / "gemini-cli", p)
    assert_missing_guard(rt, rt.run(p, missing_guard_script(rt, p), skip_trust=True), p)


def test_gemini_cli_extension_runs_the_guard_qrspi_guard_names(clis: dict[str, Path],
                                                              tmp_path: Path) -> None:
    p = project(tmp_path, "gconf")
    rt = Gemini(clis["gemini"], tmp_path / "gconf" / "home", BASE_PATH)
    rt.install_extension(ROOT / "integrations" / "gemini-cli", p)
    out = rt.run(p, reviewer(rt, p)[:1], skip_trust=True,
                 extra_env={"QRSPI_GUARD": shlex.quote(f"{GUARD_BIN}/qrspi-guard").strip("'")})
    assert "severity_out_of_enum" in out.result(0)
