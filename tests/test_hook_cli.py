"""End-to-end tests of `qrspi-guard hook`: the installed console script, realistic payloads."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.support import run_main

SCRIPT = Path(sys.executable).parent / "qrspi-guard"

pytestmark = pytest.mark.skipif(not SCRIPT.exists(), reason="console script not installed")

CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
NAME = "quality-claude.finding-F02.md"


def finding(**changes: Any) -> str:
    fields = {"finding_id": "R3-F02", "severity": "high", "change_type": "correctness",
              "referenced_files": "[skills/design/SKILL.md:L120-L134]", "artifact": "design",
              "round": "3", "reviewer": "quality-claude"}
    body = changes.pop("body", "The retry path is dropped; restore it before phasing.\n")
    fields.update(changes)
    head = "".join(f"{k}: {v}\n" for k, v in fields.items() if v is not None)
    return f"---\n{head}---\n\n{body}"


@pytest.fixture
def run(tmp_path: Path) -> Path:
    art = tmp_path / "docs" / "qrspi" / "2026-05-17-auth-rework"
    (art / "reviews" / "design" / "round-03").mkdir(parents=True)
    (art / "config.md").write_text("---\nsecond_reviewer: true\nverifier_enabled: true\n---\n")
    return art


def rnd(run: Path) -> Path:
    return run / "reviews" / "design" / "round-03"


def base(event: str, cwd: Path | str) -> dict[str, Any]:
    return {"session_id": "8c35adc1-0000-4000-8000-000000000000",
            "transcript_path": "/home/u/.claude/projects/x/8c35adc1.jsonl",
            "cwd": str(cwd), "permission_mode": "acceptEdits", "hook_event_name": event,
            "tool_use_id": "toolu_01ABC123"}


def write_call(path: Path | str, content: str, cwd: Path | str) -> dict[str, Any]:
    return base("PreToolUse", cwd) | {
        "tool_name": "Write", "tool_input": {"file_path": str(path), "content": content}}


def edit_call(path: Path | str, cwd: Path | str, tool: str = "Edit") -> dict[str, Any]:
    tool_input: dict[str, Any] = {"file_path": str(path)}
    if tool == "Edit":
        tool_input |= {"old_string": "severity: high", "new_string": "severity: severe",
                       "replace_all": False}
    else:
        tool_input["edits"] = [{"old_string": "high", "new_string": "severe"}]
    return base("PostToolUse", cwd) | {"tool_name": tool, "tool_input": tool_input,
                                       "tool_response": {"filePath": str(path),
                                                         "success": True}}


def hook(stdin: dict[str, Any] | bytes | str, *args: str, cwd: Path | None = None
         ) -> subprocess.CompletedProcess[str]:
    data = json.dumps(stdin).encode() if isinstance(stdin, dict) else stdin
    if isinstance(data, str):
        data = data.encode()
    proc = run_main("hook", *args, input=data, cwd=cwd)
    return subprocess.CompletedProcess(proc.args, proc.returncode,
                                       proc.stdout.decode("utf-8", "strict"),
                                       proc.stderr.decode("utf-8", "strict"))


def test_valid_finding_write_exits_0_silently(run: Path) -> None:
    r = hook(write_call(rnd(run) / NAME, finding(), run), "--event", "pre")
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")


@pytest.mark.parametrize("changes, cause, example", [
    ({"change_type": "corectness"}, "change_type_out_of_enum", "change_type: correctness"),
    ({"severity": "critical"}, "severity_out_of_enum", "severity: medium"),
    ({"change_type": None, "category": "correctness"}, "missing_change_type",
     "change_type: correctness"),
    ({"finding_id": "F-2"}, "finding_id_malformed", "finding_id: R3-F02"),
    ({"round": "2", "finding_id": "R2-F02"}, "round_mismatch", "round: 3"),
    ({"referenced_files": "SKILL.md"}, "referenced_files_not_list", "referenced_files: ["),
    ({"artifact": None}, "missing_artifact", "artifact: design"),
    ({"round": "third"}, "round_not_integer", "round: 3"),
    ({"body": "\n"}, "missing_message", "(after the closing ---"),
    ({"body": "One.\n<<<FINDING-BOUNDARY>>>\nTwo.\n"}, "combined_findings",
     "the next finding goes in quality-claude.finding-F03.md"),
])
def test_each_error_class_exits_2_naming_cause_and_fix(run: Path, changes: dict[str, Any],
                                                        cause: str, example: str) -> None:
    from qrspi_guard.contract.causes import cause as catalogue
    from qrspi_guard.contract.codespans import plain

    r = hook(write_call(rnd(run) / NAME, finding(**changes), run), "--event", "pre")
    assert r.returncode == 2
    assert f"- {cause}" in r.stderr
    assert plain(catalogue(cause).fix) in r.stderr  # code spans quoted, not Markdown
    assert "example: " + example in r.stderr
    assert r.stdout == ""
    assert not (rnd(run) / NAME).exists()  # the hook never writes


@pytest.mark.parametrize("content, cause", [
    ("---\nfinding_id: R3-F02\n", "no_frontmatter"),
    ("---\nseverity: {high\n---\n\nx\n", "malformed_yaml"),
    (finding().replace("\n", "\r\n"), "crlf_line_endings"),
])
def test_file_level_errors_exit_2(run: Path, content: str, cause: str) -> None:
    r = hook(write_call(rnd(run) / NAME, content, run), "--event", "pre")
    assert r.returncode == 2 and f"- {cause}" in r.stderr


def test_event_is_taken_from_the_payload_without_the_option(run: Path) -> None:
    r = hook(write_call(rnd(run) / NAME, finding(severity="x"), run))
    assert r.returncode == 2 and "severity_out_of_enum" in r.stderr


def test_unknown_file_in_round_dir_exits_2(run: Path) -> None:
    r = hook(write_call(rnd(run) / "review-notes.md", "raw reviewer stdout\n", run))
    assert r.returncode == 2
    assert "unknown_file_in_round_dir" in r.stderr and "<tag>.finding-F<NN>.md" in r.stderr


def test_clean_sentinel_beside_existing_findings_exits_2(run: Path) -> None:
    (rnd(run) / NAME).write_text(finding())
    clean = "---\nreviewer: quality-claude\nround: 3\nfindings: 0\n---\n"
    r = hook(write_call(rnd(run) / "quality-claude.clean.md", clean, run))
    assert r.returncode == 2 and "clean_and_findings_coexist" in r.stderr
    assert "Remove whichever is stale" in r.stderr


def test_duplicate_finding_id_exits_2(run: Path) -> None:
    (rnd(run) / NAME).write_text(finding())
    r = hook(write_call(rnd(run) / "quality-claude.finding-F03.md", finding(), run))
    assert r.returncode == 2 and "duplicate_finding_id" in r.stderr


def test_impersonation_exits_2(run: Path) -> None:
    r = hook(write_call(rnd(run) / "scope-codex.finding-F01.md",
                        finding(finding_id="R3-F01"), run))
    assert r.returncode == 2 and "reviewer_tag_mismatch" in r.stderr
    assert "example: reviewer: scope-codex" in r.stderr


def test_warnings_only_exit_0_silently(run: Path) -> None:
    r = hook(write_call(rnd(run) / NAME, finding(artifact="plan").rstrip("\n"), run))
    assert (r.returncode, r.stderr) == (0, "")


def test_write_outside_any_round_exits_0_silently(run: Path) -> None:
    for path in (run / "design.md", run / "reviews" / "design" / "round-03-dispositions.md",
                 "/etc/hosts-copy"):
        r = hook(write_call(path, "anything: [\n", run), "--event", "pre")
        assert (r.returncode, r.stdout, r.stderr) == (0, "", "")


def test_non_file_tool_exits_0_silently(run: Path) -> None:
    call = base("PreToolUse", run) | {"tool_name": "Bash", "tool_input": {
        "command": f"echo x > {rnd(run) / 'notes.md'}", "description": "write"}}
    r = hook(call)
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")


@pytest.mark.parametrize("stdin", [b"", b"not json", b'{"tool_name": "Write"', b"[]",
                                   b"\xff\xfe"])
def test_malformed_stdin_exits_0_with_one_line(stdin: bytes) -> None:
    r = hook(stdin, "--event", "pre")
    assert r.returncode == 0
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("qrspi-guard hook: ")


def test_missing_tool_input_exits_0_with_one_line(run: Path) -> None:
    call = base("PreToolUse", run) | {"tool_name": "Write"}
    r = hook(call)
    assert r.returncode == 0 and r.stderr.count("\n") == 1 and "tool_input" in r.stderr


@pytest.mark.parametrize("args", [["--bogus"], ["--event", "sideways"], ["extra-arg"],
                                  ["--event"]])
def test_bad_options_never_block_a_valid_write_and_say_so(run: Path, args: list[str]) -> None:
    call = write_call(rnd(run) / NAME, finding(), run)
    call["session_id"] = f"bad-options-{uuid.uuid4()}"  # told once a session: a new one
    r = hook(call, *args)
    assert (r.returncode, r.stderr) == (0, "")
    told = json.loads(r.stdout)["systemMessage"]
    assert told.startswith("qrspi-guard hook: cannot use its command line (") and args[0] in told


def test_fail_closed_turns_own_failures_into_exit_2(run: Path) -> None:
    assert hook(b"not json", "--fail-closed").returncode == 2
    assert hook(b"not json", "--fail-closed", "--bogus").returncode == 2
    call = base("PreToolUse", run) | {"tool_name": "Write"}
    r = hook(call, "--fail-closed")
    assert r.returncode == 2 and "--fail-closed" in r.stderr
    # ... but not the silent cases: a write outside a round still passes
    assert hook(write_call(run / "x.md", "x", run), "--fail-closed").returncode == 0


def test_post_edit_into_an_invalid_state_exits_2(run: Path) -> None:
    path = rnd(run) / NAME
    path.write_text(finding(severity="severe"))  # what the Edit left on disk
    for tool in ("Edit", "MultiEdit"):
        r = hook(edit_call(path, run, tool), "--event", "post")
        assert r.returncode == 2
        assert "severity_out_of_enum" in r.stderr and "your edit was applied" in r.stderr
        assert "found:   severe" in r.stderr and "example: severity: medium" in r.stderr


def test_post_edit_leaving_a_valid_file_exits_0(run: Path) -> None:
    path = rnd(run) / NAME
    path.write_text(finding())
    r = hook(edit_call(path, run), "--event", "post")
    assert (r.returncode, r.stderr) == (0, "")


def test_post_edit_of_an_unreadable_file_never_blocks(run: Path) -> None:
    r = hook(edit_call(rnd(run) / NAME, run), "--event", "post")  # file does not exist
    assert r.returncode == 0 and r.stderr.count("\n") == 1 and "cannot read" in r.stderr
    assert hook(edit_call(rnd(run) / NAME, run), "--event", "post",
                "--fail-closed").returncode == 2


def test_relative_path_is_resolved_against_payload_cwd(run: Path, tmp_path: Path) -> None:
    rel = "round-03/" + NAME
    r = hook(write_call(rel, finding(change_type="bug"), run / "reviews" / "design"),
             cwd=tmp_path)
    assert r.returncode == 2 and "change_type_out_of_enum" in r.stderr
    # the same relative path under another cwd is not a round, whatever the process cwd
    r = hook(write_call(rel, finding(change_type="bug"), tmp_path), cwd=run / "reviews" / "design")
    assert (r.returncode, r.stderr) == (0, "")


def test_dotdot_path_into_a_round_is_judged(run: Path) -> None:
    path = f"{run}/feedback/../reviews/design/round-03/{NAME}"
    r = hook(write_call(path, finding(severity="urgent"), run))
    assert r.returncode == 2 and "severity_out_of_enum" in r.stderr


def test_symlinked_round_directory_is_resolved(run: Path, tmp_path: Path) -> None:
    link = tmp_path / "current-round"
    link.symlink_to(rnd(run), target_is_directory=True)
    r = hook(write_call(link / NAME, finding(severity="urgent"), tmp_path))
    assert r.returncode == 2 and "severity_out_of_enum" in r.stderr
    r = hook(write_call("current-round/" + NAME, finding(), tmp_path))
    assert (r.returncode, r.stderr) == (0, "")


def test_message_never_contains_raw_control_characters(run: Path) -> None:
    nasty = "\x1b[31m\x1b]8;;http://x\x07\r\x08\u202e\u2028\x9b"
    content = finding(severity=json.dumps(nasty), change_type=json.dumps("bug" + nasty),
                      reviewer=json.dumps(nasty), body=f"finding_id: {nasty}\n")
    r = hook(write_call(rnd(run) / NAME, content, run))
    assert r.returncode == 2
    assert not CONTROL.search(r.stderr.replace("\n", ""))
    assert "\\x1b" in r.stderr  # shown escaped, not dropped
    for line in r.stderr.splitlines():
        assert not CONTROL.search(line)


def test_help_shows_an_example_and_exits_0() -> None:
    r = hook(b"", "--help")
    assert r.returncode == 0 and "--event pre" in r.stdout and "--fail-closed" in r.stdout


def test_no_op_call_does_not_import_the_rules(run: Path, tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPROFILEIMPORTTIME="1")
    proc = subprocess.run([str(SCRIPT), "hook"], input=json.dumps(
        write_call(run / "design.md", "x", run)).encode(), capture_output=True, timeout=60,
        env=env)
    assert proc.returncode == 0
    imported = proc.stderr.decode()
    for heavy in ("yaml", "pydantic", "qrspi_guard.engine", "frontmatter"):
        assert not re.search(rf"\|\s+{re.escape(heavy)}$", imported, re.M), heavy
    assert "qrspi_guard.hook" in imported


# -- issue 14: edits before they land, Gemini CLI, shell commands, bad input -----------------


def pre_edit(path: Path, cwd: Path, old: str, new: str, tool: str = "Edit") -> dict[str, Any]:
    tool_input: dict[str, Any] = {"file_path": str(path)}
    if tool == "MultiEdit":
        tool_input["edits"] = [{"old_string": old, "new_string": new}]
    else:
        tool_input |= {"old_string": old, "new_string": new, "replace_all": False}
    return base("PreToolUse", cwd) | {"tool_name": tool, "tool_input": tool_input}


@pytest.mark.parametrize("tool", ["Edit", "MultiEdit"])
def test_an_edit_into_an_invalid_finding_is_refused_before_it_lands(run: Path,
                                                                    tool: str) -> None:
    path = rnd(run) / NAME
    path.write_text(finding())
    r = hook(pre_edit(path, run, "severity: high", "severity: severe", tool))
    assert r.returncode == 2 and "refused this edit" in r.stderr
    assert "found:   severe" in r.stderr and "example: severity: medium" in r.stderr
    assert path.read_text() == finding()
    r = hook(pre_edit(path, run, "severity: high", "severity: low", tool))
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")


def test_an_edit_that_would_not_apply_passes_silently(run: Path) -> None:
    path = rnd(run) / NAME
    path.write_text(finding())
    for old in ("severity: nonexistent", "e"):  # missing; not unique
        r = hook(pre_edit(path, run, old, "x"))
        assert (r.returncode, r.stdout, r.stderr) == (0, "", "")


def gemini_call(event: str, tool: str, cwd: Path, **tool_input: Any) -> dict[str, Any]:
    return {"session_id": "s1", "transcript_path": "/tmp/t.json", "cwd": str(cwd),
            "hook_event_name": event, "timestamp": "2026-05-17T10:00:00Z",
            "tool_name": tool, "tool_input": tool_input}


def test_gemini_write_file_and_replace_are_judged_before_they_land(run: Path) -> None:
    rel = f"reviews/design/round-03/{NAME}"
    r = hook(gemini_call("BeforeTool", "write_file", run, file_path=rel,
                         content=finding(change_type="bugfix")))
    assert r.returncode == 2 and "change_type_out_of_enum" in r.stderr
    (rnd(run) / NAME).write_text(finding())
    r = hook(gemini_call("BeforeTool", "replace", run, file_path=rel,
                         old_string="reviewer: quality-claude", new_string="reviewer: other"))
    assert r.returncode == 2 and "reviewer_tag_mismatch" in r.stderr


def test_a_shell_command_that_wrote_a_bad_finding_is_reported_after_it(run: Path) -> None:
    (rnd(run) / NAME).write_text(finding(severity="urgent"))
    command = (f"cat > reviews/design/round-03/{NAME} <<'EOF'\n"
               f"{finding(severity='urgent')}EOF")
    for call in (base("PostToolUse", run) | {"tool_name": "Bash",
                                             "tool_input": {"command": command}},
                 gemini_call("AfterTool", "run_shell_command", run, command=command)):
        r = hook(call)
        assert r.returncode == 2 and "after your command" in r.stderr
        assert "severity_out_of_enum" in r.stderr


def test_a_shell_command_naming_no_round_passes_silently(run: Path) -> None:
    call = base("PostToolUse", run) | {"tool_name": "Bash",
                                       "tool_input": {"command": "git status"}}
    r = hook(call)
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")


@pytest.mark.parametrize("tool_input, words", [
    ({"file_path": 7, "content": "x"}, "no usable file_path"),
    ({"file_path": "reviews/design/round-03/" + NAME, "content": 7}, "content"),
    ({"file_path": "reviews/design/round-03/" + NAME, "old_string": "a", "new_string": 1},
     "new_string"),
])
def test_mistyped_fields_are_one_line_and_never_block(run: Path, tool_input: dict[str, Any],
                                                       words: str) -> None:
    tool = "Edit" if "old_string" in tool_input else "Write"
    r = hook(base("PreToolUse", run) | {"tool_name": tool, "tool_input": tool_input})
    assert r.returncode == 0 and r.stderr.count("\n") == 1 and words in r.stderr
    r = hook(base("PreToolUse", run) | {"tool_name": tool, "tool_input": tool_input},
             "--fail-closed")
    assert r.returncode == 2 and r.stderr.count("\n") == 1


def test_a_write_or_edit_onto_a_directory_or_fifo_is_one_line(run: Path) -> None:
    (rnd(run) / "drafts").mkdir()
    os.mkfifo(rnd(run) / NAME)
    for path, words in ((rnd(run) / "drafts", "is a directory"),
                        (rnd(run) / NAME, "not a regular file")):
        for call in (write_call(path, finding(), run), pre_edit(path, run, "a", "b"),
                     edit_call(path, run)):
            r = hook(call)
            assert r.returncode == 0 and r.stderr.count("\n") == 1, r.stderr
            assert words in r.stderr


def test_a_path_outside_the_project_is_judged_only_when_it_is_a_round(run: Path,
                                                                     tmp_path: Path) -> None:
    elsewhere = tmp_path / "other" / "reviews" / "design" / "round-03"
    elsewhere.mkdir(parents=True)
    r = hook(write_call(elsewhere / NAME, finding(severity="x"), run))
    assert r.returncode == 2 and "severity_out_of_enum" in r.stderr
    r = hook(write_call("../../../../etc/qrspi-test", "x", run))
    assert (r.returncode, r.stderr) == (0, "")


def test_a_huge_non_text_edit_string_is_judged_not_a_crash(run: Path) -> None:
    path = rnd(run) / NAME
    path.write_text(finding())
    r = hook(pre_edit(path, run, "restore it", "\ud800" * 10 + "x" * (3 << 20)))
    assert r.returncode == 2 and "file_too_large" in r.stderr


def test_stdin_over_the_cap_is_one_line_and_never_blocks() -> None:
    r = hook(b"{" + b" " * (33 << 20) + b"}")
    assert r.returncode == 0 and "larger than 32 MiB" in r.stderr
