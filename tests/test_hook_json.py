"""`--output-format json`: the runtimes' documented JSON answers, through the console script.

Field names, as documented by each runtime:

- Claude Code hooks reference (PreToolUse decision control): a ``PreToolUse`` hook
  answers inside ``hookSpecificOutput`` with ``hookEventName``, ``permissionDecision``
  (``allow`` / ``deny`` / ``ask``) and ``permissionDecisionReason``, which for ``deny``
  is shown to Claude; ``allow`` would skip the permission prompt, so the hook never
  says it. ``PostToolUse`` takes a top-level ``decision: "block"`` with ``reason``; it
  would also take ``hookSpecificOutput.additionalContext``, but Claude Code 2.1 hands
  the agent both, one after the other, so the verdict goes in ``reason`` only (the real
  runtime shows it: tests/test_runtimes_real.py). Exit 0 makes
  Claude Code parse stdout as JSON. (Summarised from code.claude.com/docs/en/hooks, as
  quoted by the xsyetopz/claudetto wiki page "Claude Code Hooks Events Tool".)
- Gemini CLI hooks reference (geminicli.com/docs/hooks/reference): on exit 0 stdout is
  parsed as JSON and must hold nothing else; ``decision`` is ``"allow"`` or ``"deny"``
  (alias ``"block"``) with ``reason``; for ``BeforeTool`` a deny keeps the tool from
  running and the reason goes to the agent, for ``AfterTool`` the reason replaces the
  tool result the agent sees.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from qrspi_guard.hook import block_object
from qrspi_guard.hook.respond import answer, failure
from tests.support import run_cli

GOOD = """---
finding_id: R3-F01
severity: high
change_type: correctness
referenced_files: [design.md:L10-L20]
artifact: design
round: 3
reviewer: quality-claude
---

The design drops the retry path; restore it.
"""
BAD = GOOD.replace("severity: high", "severity: urgent")
NAME = "quality-claude.finding-F01.md"


@pytest.fixture
def rnd(tmp_path: Path) -> Path:
    d = tmp_path / "reviews" / "design" / "round-03"
    d.mkdir(parents=True)
    return d


def hook(payload: dict[str, Any] | bytes, *args: str) -> tuple[int, str, str]:
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    proc = run_cli("hook", *args, input=data)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def write(event: str, tool: str, path: Path, content: str) -> dict[str, Any]:
    return {"hook_event_name": event, "tool_name": tool, "cwd": str(path.parent),
            "tool_input": {"file_path": str(path), "content": content}}


# -- the shapes, pure ---------------------------------------------------------------------


def test_claude_pre_deny_is_a_permission_decision() -> None:
    assert block_object("R", "claude", "pre") == {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "deny",
        "permissionDecisionReason": "R"}}


def test_claude_post_block_says_the_verdict_once() -> None:
    assert block_object("R", "claude", "post") == {"decision": "block", "reason": "R"}


def test_gemini_answers_deny_before_and_block_after() -> None:
    assert block_object("R", "gemini", "pre") == {"decision": "deny", "reason": "R"}
    assert block_object("R", "gemini", "post") == {"decision": "block", "reason": "R"}


def test_allowing_says_nothing_in_either_form() -> None:
    for fmt in ("text", "json"):
        quiet = answer(False, "", fmt, "claude", "pre")
        assert (quiet.stdout, quiet.stderr, quiet.code) == ("", "", 0)


def test_an_own_failure_closed_in_json_without_a_runtime_falls_back_to_exit_2() -> None:
    result = failure("stdin is not JSON", True, "json", None, None)
    assert (result.stdout, result.code) == ("", 2)
    assert result.stderr.startswith("qrspi-guard hook: stdin is not JSON; blocking")


# -- through the console script --------------------------------------------------------------


@pytest.mark.parametrize("event, tool", [("PreToolUse", "Write"), ("BeforeTool", "write_file")])
def test_a_json_deny_carries_exactly_the_exit_2_text(rnd: Path, event: str, tool: str) -> None:
    payload = write(event, tool, rnd / NAME, BAD)
    code, out, err = hook(payload)
    assert code == 2 and out == "" and "severity_out_of_enum" in err
    jcode, jout, jerr = hook(payload, "--output-format", "json")
    assert (jcode, jerr) == (0, "")
    assert jout.endswith("\n") and jout.count("\n") == 1  # one JSON object, one line
    answer_ = json.loads(jout)
    reason = (answer_["hookSpecificOutput"]["permissionDecisionReason"]
              if tool == "Write" else answer_["reason"])
    assert reason == err
    assert answer_ == block_object(err, "claude" if tool == "Write" else "gemini", "pre")


@pytest.mark.parametrize("event, tool", [("PostToolUse", "Edit"), ("AfterTool", "replace")])
def test_a_json_block_after_an_edit_names_the_post_event(rnd: Path, event: str,
                                                        tool: str) -> None:
    (rnd / NAME).write_text(BAD)
    payload = {"hook_event_name": event, "tool_name": tool,
               "tool_input": {"file_path": str(rnd / NAME), "old_string": "a",
                              "new_string": "b"}}
    _, _, err = hook(payload)
    code, out, _ = hook(payload, "--output-format=json")
    runtime = "claude" if tool == "Edit" else "gemini"
    assert code == 0 and json.loads(out) == block_object(err, runtime, "post")


def test_an_allowed_call_in_json_mode_prints_nothing(rnd: Path) -> None:
    for payload in (write("PreToolUse", "Write", rnd / NAME, GOOD),
                    write("BeforeTool", "write_file", rnd.parent / "notes.md", "x"),
                    {"hook_event_name": "PostToolUse", "tool_name": "Bash",
                     "tool_input": {"command": "ls"}}):
        assert hook(payload, "--output-format", "json") == (0, "", "")


def test_json_mode_own_failures_allow_with_one_line_unless_fail_closed(rnd: Path) -> None:
    broken = {"hook_event_name": "BeforeTool", "tool_name": "write_file", "tool_input": {}}
    code, out, err = hook(broken, "--output-format", "json")
    assert (code, out) == (0, "") and err.count("\n") == 1 and "file_path" in err
    code, out, err = hook(broken, "--output-format", "json", "--fail-closed")
    assert code == 0 and err.count("\n") == 1
    assert json.loads(out) == {"decision": "deny", "reason": err}


def test_json_mode_fail_closed_without_a_payload_blocks_by_exit_2() -> None:
    code, out, err = hook(b"not json", "--output-format", "json", "--fail-closed")
    assert (code, out) == (2, "") and "stdin is not JSON" in err
    code, out, err = hook(b"not json", "--output-format", "json", "--fail-closed",
                          "--runtime", "claude", "--event", "pre")
    assert code == 0 and json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_a_bad_output_format_leaves_the_exit_2_form_guarding(rnd: Path) -> None:
    code, out, err = hook(write("PreToolUse", "Write", rnd / NAME, BAD), "--output-format",
                          "yaml")
    assert (code, out) == (2, "") and "severity_out_of_enum" in err
    assert err.startswith("qrspi-guard hook: cannot use its command line (invalid value for "
                          "--output-format: 'yaml'")


def test_a_json_block_that_stdout_cannot_take_falls_back_to_exit_2(rnd: Path) -> None:
    import os
    import subprocess

    from tests.support import SCRIPT

    read_end, write_end = os.pipe()
    os.close(read_end)  # nobody reads: the write fails with EPIPE
    try:
        proc = subprocess.run([str(SCRIPT), "hook", "--output-format", "json"],
                              input=json.dumps(write("PreToolUse", "Write", rnd / NAME,
                                                     BAD)).encode(),
                              stdout=write_end, stderr=subprocess.PIPE, timeout=60)
    finally:
        os.close(write_end)
    assert proc.returncode == 2
    assert proc.stderr.decode().startswith("qrspi-guard refused this write:")
    assert b"Traceback" not in proc.stderr
