"""Edits judged before they land: Edit, MultiEdit and Gemini's replace applied in memory.

The model follows the tools' documented behaviour: Claude Code's Edit replaces a
unique ``old_string`` (all of them with ``replace_all``), an empty ``old_string``
creates a file; MultiEdit applies its edits in order, all or nothing. Gemini CLI's
``replace`` (packages/core/src/tools/edit.ts in google-gemini/gemini-cli) replaces
every occurrence, requires their number to equal ``expected_replacements`` (default
1), creates a file from an empty ``old_string`` and normalises CR LF to LF.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from qrspi_guard.hook import HookFailure, decide
from qrspi_guard.hook.edits import WORK_CAP, claude_edits, gemini_replace

FINDING = """---
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
NAME = "quality-claude.finding-F01.md"


@pytest.fixture
def rnd(tmp_path: Path) -> Path:
    d = tmp_path / "reviews" / "design" / "round-03"
    d.mkdir(parents=True)
    return d


def claude(path: Path, tool: str = "Edit", **tool_input: Any) -> dict[str, Any]:
    return {"hook_event_name": "PreToolUse", "tool_name": tool,
            "tool_input": {"file_path": str(path), **tool_input}}


def gemini(path: Path, **tool_input: Any) -> dict[str, Any]:
    return {"hook_event_name": "BeforeTool", "tool_name": "replace",
            "tool_input": {"file_path": str(path), **tool_input}}


def causes(decision: Any) -> list[str]:
    return sorted(d.cause for d in decision.diagnostics if d.level == "error")


# -- the model, pure ----------------------------------------------------------------------


def test_claude_edit_replaces_a_unique_string() -> None:
    assert claude_edits("a b c\n", [("b", "x", False)]) == "a x c\n"


def test_claude_edit_of_a_string_that_is_not_unique_does_not_apply() -> None:
    assert claude_edits("a a\n", [("a", "x", False)]) is None
    assert claude_edits("a a\n", [("a", "x", True)]) == "x x\n"


def test_claude_edit_of_missing_or_unchanged_text_does_not_apply() -> None:
    assert claude_edits("abc\n", [("z", "x", False)]) is None
    assert claude_edits("abc\n", [("b", "b", False)]) is None


def test_claude_empty_old_string_creates_a_missing_or_empty_file_only() -> None:
    assert claude_edits(None, [("", "new\n", False)]) == "new\n"
    assert claude_edits("", [("", "new\n", False)]) == "new\n"
    assert claude_edits("old\n", [("", "new\n", False)]) is None
    assert claude_edits(None, [("old", "new", False)]) is None


def test_multiedit_applies_in_order_and_all_or_nothing() -> None:
    assert claude_edits("one two\n", [("one", "two", False), ("two two", "2", False)]) \
        == "2\n"
    assert claude_edits("one two\n", [("one", "1", False), ("three", "3", False)]) is None
    assert claude_edits(None, [("", "a b\n", False), ("b", "c", False)]) == "a c\n"


def test_claude_keeps_crlf_line_endings_while_matching_lf() -> None:
    assert claude_edits("a: 1\r\nb: 2\r\n", [("a: 1\nb", "a: 9\nb", False)]) \
        == "a: 9\r\nb: 2\r\n"


def test_gemini_replace_needs_exactly_the_expected_number_of_occurrences() -> None:
    assert gemini_replace("a a\n", "a", "x", 1) is None
    assert gemini_replace("a a\n", "a", "x", 2) == "x x\n"
    assert gemini_replace("a b\n", "a", "x", 1) == "x b\n"
    assert gemini_replace("a b\n", "z", "x", 1) is None
    assert gemini_replace("a b\n", "a", "a", 1) is None


def test_gemini_replace_creates_only_a_missing_file_and_writes_lf() -> None:
    assert gemini_replace(None, "", "new\n", 1) == "new\n"
    assert gemini_replace("x\n", "", "new\n", 1) is None
    assert gemini_replace(None, "x", "y", 1) is None
    assert gemini_replace("a: 1\r\nb: 2\r\n", "a: 1\nb", "a: 9\nb", 1) == "a: 9\nb: 2\n"


def test_an_edit_growing_past_the_cap_is_cut_to_what_the_rules_read() -> None:
    from qrspi_guard.parse.frontmatter import MAX_BYTES

    text = "x" * 1000 + "\n"
    grown = claude_edits(text, [("x", "y" * (WORK_CAP // 100), True)])
    assert grown is not None and len(grown) == MAX_BYTES + 1


def test_an_intermediate_edit_growing_past_the_cap_is_a_hook_failure() -> None:
    with pytest.raises(HookFailure, match="past 8 MiB"):
        claude_edits("x" * 1000, [("x", "y" * (WORK_CAP // 100), True), ("y", "z", True)])


# -- decisions on edit payloads -----------------------------------------------------------------


def test_an_edit_into_an_invalid_finding_is_refused_before_it_lands(rnd: Path) -> None:
    (rnd / NAME).write_text(FINDING)
    decision = decide(claude(rnd / NAME, old_string="severity: high",
                             new_string="severity: severe"))
    assert causes(decision) == ["severity_out_of_enum"]
    assert decision.message.startswith("qrspi-guard refused this edit:")
    assert "then make the edit again" in decision.message
    assert (rnd / NAME).read_text() == FINDING  # the hook never writes


def test_an_edit_keeping_the_finding_valid_is_allowed_silently(rnd: Path) -> None:
    (rnd / NAME).write_text(FINDING)
    decision = decide(claude(rnd / NAME, old_string="severity: high",
                             new_string="severity: low"))
    assert decision.action == "allow" and decision.message == ""


def test_an_edit_whose_text_is_missing_or_ambiguous_is_allowed(rnd: Path) -> None:
    (rnd / NAME).write_text(FINDING)
    assert decide(claude(rnd / NAME, old_string="severity: critical",
                         new_string="severity: x")).action == "allow"
    assert decide(claude(rnd / NAME, old_string="e", new_string="E")).action == "allow"


def test_replace_all_edits_every_occurrence(rnd: Path) -> None:
    (rnd / NAME).write_text(FINDING)
    decision = decide(claude(rnd / NAME, old_string="R3", new_string="R4", replace_all=True))
    assert causes(decision) == ["round_mismatch"]


def test_multiedit_is_judged_after_its_last_edit(rnd: Path) -> None:
    (rnd / NAME).write_text(FINDING)
    edits = [{"old_string": "severity: high", "new_string": "severity: bogus"},
             {"old_string": "severity: bogus", "new_string": "severity: medium"}]
    assert decide(claude(rnd / NAME, "MultiEdit", edits=edits)).action == "allow"
    edits[1]["new_string"] = "severity: huge"
    assert causes(decide(claude(rnd / NAME, "MultiEdit", edits=edits))) == [
        "severity_out_of_enum"]


def test_an_edit_creating_a_file_judges_new_string_as_a_write(rnd: Path) -> None:
    bad = FINDING.replace("change_type: correctness", "change_type: bug")
    decision = decide(claude(rnd / NAME, old_string="", new_string=bad))
    assert causes(decision) == ["change_type_out_of_enum"]


def test_gemini_replace_is_judged_before_it_lands(rnd: Path) -> None:
    (rnd / NAME).write_text(FINDING)
    bad = decide(gemini(rnd / NAME, old_string="severity: high", new_string="severity: x"))
    assert causes(bad) == ["severity_out_of_enum"] and bad.runtime == "gemini"
    twice = gemini(rnd / NAME, old_string="3", new_string="4")
    assert decide(twice).action == "allow"  # 2 occurrences, 1 expected: the tool refuses
    twice["tool_input"]["expected_replacements"] = 2
    assert causes(decide(twice)) == ["round_mismatch"]


def test_an_edit_of_a_crlf_file_keeps_it_crlf_so_it_is_refused(rnd: Path) -> None:
    (rnd / NAME).write_bytes(FINDING.replace("\n", "\r\n").encode())
    decision = decide(claude(rnd / NAME, old_string="severity: high",
                             new_string="severity: low"))
    assert "crlf_line_endings" in causes(decision)
    fixed = decide(gemini(rnd / NAME, old_string="severity: high", new_string="severity: low"))
    assert fixed.action == "allow"  # Gemini CLI writes LF


def test_an_edit_of_a_file_that_is_not_utf8_is_left_to_the_post_event(rnd: Path) -> None:
    (rnd / NAME).write_bytes(b"\xff\xfe" + FINDING.encode())
    assert decide(claude(rnd / NAME, old_string="high", new_string="low")).action == "allow"


def test_an_edit_through_a_symlink_in_a_round_is_symlink_in_round_dir(rnd: Path,
                                                                     tmp_path: Path) -> None:
    real = tmp_path / "real.md"
    real.write_text(FINDING)
    (rnd / NAME).symlink_to(real)
    decision = decide(claude(rnd / NAME, old_string="high", new_string="low"))
    assert causes(decision) == ["symlink_in_round_dir"]


@pytest.mark.parametrize("tool_input, words", [
    ({"old_string": 1, "new_string": "x"}, "old_string is a number, not a string"),
    ({"new_string": "x"}, "no old_string"),
    ({"old_string": "a", "new_string": ["x"]}, "new_string"),
    ({"old_string": "a", "new_string": "b", "replace_all": "yes"}, "replace_all"),
])
def test_mistyped_edit_fields_are_hook_failures(rnd: Path, tool_input: dict[str, Any],
                                                words: str) -> None:
    (rnd / NAME).write_text(FINDING)
    with pytest.raises(HookFailure, match=words):
        decide(claude(rnd / NAME, **tool_input))


@pytest.mark.parametrize("edits", [None, [], "x", [1], [{"old_string": "a"}]])
def test_mistyped_multiedit_lists_are_hook_failures(rnd: Path, edits: object) -> None:
    (rnd / NAME).write_text(FINDING)
    with pytest.raises(HookFailure):
        decide(claude(rnd / NAME, "MultiEdit", edits=edits))


@pytest.mark.parametrize("expected", ["2", True, 1.5, [1]])
def test_mistyped_expected_replacements_is_a_hook_failure(rnd: Path, expected: object) -> None:
    (rnd / NAME).write_text(FINDING)
    with pytest.raises(HookFailure, match="expected_replacements"):
        decide(gemini(rnd / NAME, old_string="high", new_string="low",
                      expected_replacements=expected))


def test_an_edit_of_a_directory_or_fifo_is_a_hook_failure(rnd: Path) -> None:
    (rnd / "sub.md").mkdir()
    with pytest.raises(HookFailure, match="is a directory"):
        decide(claude(rnd / "sub.md", old_string="a", new_string="b"))
    os.mkfifo(rnd / NAME)
    with pytest.raises(HookFailure, match="not a regular file"):
        decide(claude(rnd / NAME, old_string="a", new_string="b"))


def test_a_huge_new_string_is_file_too_large_not_a_crash(rnd: Path) -> None:
    (rnd / NAME).write_text(FINDING)
    decision = decide(claude(rnd / NAME, old_string="restore it.",
                             new_string="restore it." + "x" * (2 << 20)))
    assert "file_too_large" in causes(decision)


def test_post_edit_still_judges_what_is_on_disk(rnd: Path) -> None:
    (rnd / NAME).write_text(FINDING.replace("severity: high", "severity: severe"))
    payload = claude(rnd / NAME, old_string="nothing", new_string="here")
    payload["hook_event_name"] = "PostToolUse"
    assert causes(decide(payload)) == ["severity_out_of_enum"]
