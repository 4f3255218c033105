"""Two runtimes, one hook: Claude Code and Gemini CLI payloads, and shell commands.

Gemini CLI's hook reference (geminicli.com/docs/hooks/reference) names the events
``BeforeTool`` and ``AfterTool``; its tools are ``write_file`` (``file_path``,
``content``), ``replace`` (``file_path``, ``old_string``, ``new_string``,
``expected_replacements``) and ``run_shell_command`` (``command``, optional
``directory`` relative to the project). Claude Code's are ``PreToolUse`` /
``PostToolUse`` with ``Write``, ``Edit``, ``MultiEdit`` and ``Bash``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from qrspi_guard.hook import HookFailure, decide, resolve, rounds_named, runtime_of

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
BAD = GOOD.replace("change_type: correctness", "change_type: corectness")
NAME = "quality-claude.finding-F01.md"


@pytest.fixture
def art(tmp_path: Path) -> Path:
    (tmp_path / "reviews" / "design" / "round-03").mkdir(parents=True)
    return tmp_path


def rnd(art: Path) -> Path:
    return art / "reviews" / "design" / "round-03"


def causes(decision: Any) -> list[str]:
    return sorted(d.cause for d in decision.diagnostics if d.level == "error")


def shell(command: str, cwd: Path, event: str = "PostToolUse", tool: str = "Bash",
          **extra: Any) -> dict[str, Any]:
    return {"hook_event_name": event, "tool_name": tool, "cwd": str(cwd),
            "tool_input": {"command": command, **extra}}


# -- telling the runtime and the event ------------------------------------------------------


@pytest.mark.parametrize("name, runtime, event", [
    ("PreToolUse", "claude", "pre"), ("PostToolUse", "claude", "post"),
    ("BeforeTool", "gemini", "pre"), ("AfterTool", "gemini", "post"),
])
def test_the_event_name_tells_runtime_and_event(name: str, runtime: str, event: str) -> None:
    call = resolve({"hook_event_name": name, "tool_name": "Read", "tool_input": {}})
    assert (call.runtime, call.event, call.kind) == (runtime, event, None)


def test_without_an_event_name_the_tool_name_tells_the_runtime() -> None:
    assert runtime_of({"tool_name": "write_file"}) == "gemini"
    assert runtime_of({"tool_name": "MultiEdit"}) == "claude"
    assert runtime_of({"tool_name": "Read"}) is None
    assert runtime_of({"tool_name": "Read"}, "gemini") == "gemini"


def test_runtime_option_forces_the_tool_table(art: Path) -> None:
    payload = {"hook_event_name": "BeforeTool", "tool_name": "write_file",
               "tool_input": {"file_path": str(rnd(art) / NAME), "content": BAD}}
    assert causes(decide(payload)) == ["change_type_out_of_enum"]
    assert decide(payload, runtime="claude").action == "ignore"  # not a Claude tool


def test_an_undecidable_runtime_is_a_hook_failure() -> None:
    with pytest.raises(HookFailure, match="--runtime"):
        decide({"tool_name": "Read", "tool_input": {}}, event="pre")


def test_an_undecidable_event_is_a_hook_failure() -> None:
    with pytest.raises(HookFailure, match="--event"):
        decide({"hook_event_name": "SessionStart", "tool_name": "write_file",
                "tool_input": {}})


def test_gemini_write_file_is_judged_before_it_lands(art: Path) -> None:
    payload = {"hook_event_name": "BeforeTool", "tool_name": "write_file", "cwd": str(art),
               "tool_input": {"file_path": f"reviews/design/round-03/{NAME}", "content": BAD}}
    decision = decide(payload)
    assert decision.blocks and decision.runtime == "gemini" and decision.event == "pre"
    payload["tool_input"]["content"] = GOOD
    assert decide(payload).action == "allow"


def test_gemini_after_tool_judges_the_file_on_disk(art: Path) -> None:
    (rnd(art) / NAME).write_text(BAD)
    payload = {"hook_event_name": "AfterTool", "tool_name": "replace",
               "tool_input": {"file_path": str(rnd(art) / NAME), "old_string": "a",
                              "new_string": "b"}, "tool_response": {"llmContent": "ok"}}
    decision = decide(payload)
    assert causes(decision) == ["change_type_out_of_enum"]
    assert "your edit was applied" in decision.message


def test_a_write_onto_a_directory_in_a_round_is_a_hook_failure(art: Path) -> None:
    (rnd(art) / "drafts").mkdir()
    payload = {"hook_event_name": "PreToolUse", "tool_name": "Write",
               "tool_input": {"file_path": str(rnd(art) / "drafts"), "content": GOOD}}
    with pytest.raises(HookFailure, match="is a directory"):
        decide(payload)


# -- shell commands ------------------------------------------------------------------------------


def test_a_command_naming_no_round_is_a_no_op(art: Path) -> None:
    assert decide(shell("ls -la && git status", art)).action == "ignore"
    assert decide(shell("cat reviews/design/notes.md", art)).action == "ignore"


def test_a_shell_call_before_it_runs_is_not_judged(art: Path) -> None:
    cmd = f"cat > reviews/design/round-03/{NAME} <<'EOF'\n{BAD}EOF"
    assert decide(shell(cmd, art, event="PreToolUse")).action == "ignore"


def test_a_finding_written_by_a_heredoc_is_reported_after_the_command(art: Path) -> None:
    (rnd(art) / NAME).write_text(BAD)  # what the command wrote
    cmd = f"cat > reviews/design/round-03/{NAME} <<'EOF'\n{BAD}EOF"
    decision = decide(shell(cmd, art))
    assert causes(decision) == ["change_type_out_of_enum"]
    assert decision.message.startswith("qrspi-guard: after your command, review round(s) "
                                       "design/round-03 halt with 1 error(s).")
    assert f"In design/round-03/{NAME}:" in decision.message
    assert "example: change_type: correctness" in decision.message


def test_a_valid_file_written_by_a_command_is_allowed(art: Path) -> None:
    (rnd(art) / NAME).write_text(GOOD)
    assert decide(shell(f"cp /tmp/draft.md {rnd(art) / NAME}", art)).action == "allow"


def test_shell_writes_get_the_tag_rules_of_a_write_but_not_completion(art: Path) -> None:
    (rnd(art) / NAME).write_text(GOOD)
    (rnd(art) / "quality-claude.finding-F03.md").write_text(
        GOOD.replace("F01", "F03"))  # an F-number gap: a completion matter, not judged here
    cmd = "tee reviews/design/round-03/quality-claude.finding-F03.md < /tmp/f3.md"
    assert decide(shell(cmd, art)).action == "allow"
    (rnd(art) / "quality-claude.clean.md").write_text(
        "---\nreviewer: quality-claude\nround: 3\nfindings: 0\n---\n")
    cmd = "printf '...' > reviews/design/round-03/quality-claude.clean.md"
    assert causes(decide(shell(cmd, art))) == ["clean_and_findings_coexist"]


def test_a_stray_file_written_by_a_command_is_unknown_file_in_round_dir(art: Path) -> None:
    (rnd(art) / "stdout.txt").write_text("raw reviewer output\n")
    decision = decide(shell("codex exec ... > reviews/design/round-03/stdout.txt", art))
    assert causes(decision) == ["unknown_file_in_round_dir"]


def test_gemini_directory_is_where_relative_paths_start(art: Path) -> None:
    (rnd(art) / NAME).write_text(BAD)
    payload = shell(f"cat > round-03/{NAME}", art, event="AfterTool",
                    tool="run_shell_command", directory="reviews/design")
    assert causes(decide(payload)) == ["change_type_out_of_enum"]
    del payload["tool_input"]["directory"]
    assert decide(payload).action == "ignore"


def test_a_command_run_inside_a_round_is_judged_by_what_it_wrote_there(art: Path) -> None:
    (rnd(art) / NAME).write_text(BAD)  # another reviewer's file, not this command's
    (rnd(art) / "x").write_text("")
    decision = decide(shell("touch x", rnd(art)))
    assert causes(decision) == ["unknown_file_in_round_dir"]
    assert "In design/round-03/x:" in decision.message
    assert f"In design/round-03/{NAME}" not in decision.message


def test_rounds_named_finds_every_round_once_in_order(art: Path) -> None:
    other = art / "reviews" / "tasks" / "task-02" / "round-01"
    other.mkdir(parents=True)
    cmd = (f"cp {other}/a.md reviews/design/round-03/ ; "
           f"ls \"reviews/design/round-03\" '{other}' reviews/design/round-09/x.md")
    found = rounds_named(cmd, str(art))
    assert [(Path(r).name, s, n) for r, s, n in found] == [
        ("round-01", "task-02", 1), ("round-03", "design", 3)]


def test_a_misnamed_round_directory_named_by_a_command_is_bad_round_dir_name(
        art: Path) -> None:
    (art / "reviews" / "design" / "round-3").mkdir()
    assert causes(decide(shell("mkdir reviews/design/round-3", art))) == ["bad_round_dir_name"]


def test_a_shell_payload_without_a_string_command_is_a_hook_failure(art: Path) -> None:
    with pytest.raises(HookFailure, match="command"):
        decide({"hook_event_name": "PostToolUse", "tool_name": "Bash", "cwd": str(art),
                "tool_input": {"command": ["ls"]}})


def test_any_well_formed_tag_is_accepted(art: Path) -> None:
    good = GOOD.replace("reviewer: quality-claude", "reviewer: security-gpt5")
    payload = {"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": {
        "file_path": str(rnd(art) / "security-gpt5.finding-F01.md"), "content": good}}
    assert decide(payload).action == "allow"


def test_the_guidance_takes_its_enums_from_the_contract() -> None:
    from qrspi_guard.contract.causes import cause
    from qrspi_guard.contract.schema import CHANGE_TYPES, SEVERITIES

    assert cause("severity_out_of_enum").allowed == ", ".join(SEVERITIES)
    assert cause("missing_change_type").allowed == ", ".join(CHANGE_TYPES)
