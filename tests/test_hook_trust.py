"""`hook install --runtime gemini` at project scope warns in a folder Gemini CLI does not
trust: Gemini CLI then ignores the project's settings, hooks included, without a word,
and a headless run with `--skip-trust` goes on without them (issue 31; the real runtime
shows it in tests/test_runtimes_real.py). The rules are Gemini CLI 0.61's."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from qrspi_guard.hook.trust import trusted
from tests.support import run_cli, run_main

WARNING = "Gemini CLI runs a project's hooks only in a trusted folder"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    (h / ".gemini").mkdir(parents=True)
    return h


@pytest.fixture
def project(tmp_path: Path) -> Path:
    p = tmp_path / "work" / "proj"
    p.mkdir(parents=True)
    return p


def rules(home: Path, value: object, text: str | None = None) -> None:
    (home / ".gemini" / "trustedFolders.json").write_text(
        text if text is not None else json.dumps(value))


def install(project: Path, home: Path, *args: str,
            env: dict[str, str | None] | None = None) -> tuple[int, str]:
    proc = run_main("hook", "install", "--runtime", "gemini", *args, cwd=project,
                    env={"HOME": str(home), "GEMINI_CLI_HOME": None,
                         "GEMINI_CLI_TRUSTED_FOLDERS_PATH": None,
                         "GEMINI_CLI_TRUST_WORKSPACE": None, "GEMINI_RESTRICTED_MODE": None,
                         **(env or {})})
    return proc.returncode, proc.stderr.decode()


def test_a_project_install_in_an_untrusted_folder_warns_and_says_how_to_trust_it(
        project: Path, home: Path) -> None:
    code, err = install(project, home)
    assert code == 0 and (project / ".gemini" / "settings.json").exists()
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("qrspi-guard hook: warning: " + WARNING)
    assert f"and {project} is not trusted" in err
    assert "--skip-trust does not trust it" in err
    assert "/permissions trust" in err
    assert f'add "{project}": "TRUST_FOLDER" to {home}/.gemini/trustedFolders.json' in err


def test_installing_again_in_an_untrusted_folder_warns_again(project: Path,
                                                             home: Path) -> None:
    install(project, home)
    code, err = install(project, home)
    assert code == 0 and WARNING in err


@pytest.mark.parametrize("rule", ["self", "parent-folder", "trust-parent-of-sibling"])
def test_a_trusted_folder_gets_no_warning(project: Path, home: Path, rule: str) -> None:
    value = {"self": {str(project): "TRUST_FOLDER"},
             "parent-folder": {str(project.parent): "TRUST_FOLDER"},
             "trust-parent-of-sibling": {str(project.parent / "sibling"): "TRUST_PARENT"},
             }[rule]
    rules(home, value)
    assert install(project, home) == (0, "")


def test_the_longest_rule_decides_so_a_distrusted_subfolder_warns(project: Path,
                                                                  home: Path) -> None:
    rules(home, {str(project.parent): "TRUST_FOLDER", str(project): "DO_NOT_TRUST"})
    assert WARNING in install(project, home)[1]
    rules(home, {str(project.parent): "DO_NOT_TRUST", str(project): "TRUST_FOLDER"})
    assert install(project, home)[1] == ""


def test_a_rule_for_a_sibling_with_a_common_prefix_does_not_trust(project: Path,
                                                                  home: Path) -> None:
    rules(home, {str(project) + "-old": "TRUST_FOLDER"})
    assert WARNING in install(project, home)[1]


def test_a_rule_through_a_symbolic_link_trusts_the_folder_it_names(tmp_path: Path,
                                                                   project: Path,
                                                                   home: Path) -> None:
    link = tmp_path / "link"
    link.symlink_to(project.parent)
    rules(home, {str(link): "TRUST_FOLDER"})
    assert install(project, home)[1] == ""


def test_comments_in_the_trust_file_are_read_as_gemini_reads_them(project: Path,
                                                                  home: Path) -> None:
    rules(home, None, text='// mine\n{"' + str(project) + '": /* yes */ "TRUST_FOLDER"}\n')
    assert install(project, home)[1] == ""


def test_a_trust_file_that_does_not_parse_is_named(project: Path, home: Path) -> None:
    rules(home, None, text="{nope")
    err = install(project, home)[1]
    assert WARNING in err and "may not be trusted" in err and "trustedFolders.json" in err


def test_folder_trust_switched_off_trusts_every_folder(project: Path, home: Path) -> None:
    (home / ".gemini" / "settings.json").write_text(
        json.dumps({"security": {"folderTrust": {"enabled": False}}}))
    assert install(project, home)[1] == ""


def test_the_environment_gemini_reads_decides_first(project: Path, home: Path,
                                                   tmp_path: Path) -> None:
    assert install(project, home, env={"GEMINI_CLI_TRUST_WORKSPACE": "true"})[1] == ""
    rules(home, {str(project): "TRUST_FOLDER"})
    assert WARNING in install(project, home, env={"GEMINI_RESTRICTED_MODE": "true"})[1]
    other = tmp_path / "elsewhere.json"
    other.write_text(json.dumps({str(project): "TRUST_FOLDER"}))
    (home / ".gemini" / "trustedFolders.json").unlink()
    assert install(project, home,
                   env={"GEMINI_CLI_TRUSTED_FOLDERS_PATH": str(other)})[1] == ""


def test_a_user_scope_install_and_claude_are_not_warned(project: Path, home: Path) -> None:
    assert install(project, home, "--scope", "user")[1] == ""
    proc = run_main("hook", "install", cwd=project, env={"HOME": str(home)})
    assert proc.returncode == 0 and proc.stderr == b""


def test_a_folder_name_with_a_control_character_is_escaped_in_the_warning(
        tmp_path: Path, home: Path) -> None:
    project = tmp_path / "a\x1b[31mb"
    project.mkdir()
    err = install(project, home)[1]
    assert "\x1b" not in err and len(err.splitlines()) == 1


def test_trusted_answers_false_when_there_is_no_rule(project: Path, home: Path) -> None:
    assert trusted(str(project), {}, str(home)) is False


def test_a_trust_file_with_a_rule_twice_is_named_not_read_one_way(project: Path,
                                                                  home: Path) -> None:
    """Two rules for one folder: which one Gemini CLI keeps is its parser's choice, so the
    guard says it cannot tell (issue 29: every JSON reader refuses a key twice)."""
    rules(home, None, text=f'{{"{project}": "DO_NOT_TRUST", "{project}": "TRUST_FOLDER"}}')
    err = install(project, home)[1]
    assert "may not be trusted" in err and "appears twice in one object" in err


def test_a_trust_file_that_is_a_fifo_is_named_never_waited_on(project: Path, home: Path,
                                                              tmp_path: Path) -> None:
    """A FIFO with no writer: opened without waiting, refused as not a regular file.
    (Before, `hook install` waited forever for a writer.)"""
    os.mkfifo(home / ".gemini" / "trustedFolders.json")
    proc = run_cli("hook", "install", "--runtime", "gemini", cwd=project, timeout=30,
                   env={"HOME": str(home), "GEMINI_CLI_HOME": "", "TMPDIR": str(tmp_path)})
    assert proc.returncode == 0
    assert b"may not be trusted" in proc.stderr and b"not a regular file" in proc.stderr
