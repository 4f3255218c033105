"""The hook core: payload -> decision, judged exactly as `check` judges the file."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from qrspi_guard.engine import check_paths
from qrspi_guard.hook import (
    HookFailure,
    Target,
    decide,
    event_of,
    judge,
    layout_diagnostics,
    load_payload,
    locate,
)

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "rounds"
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def finding(**changes: Any) -> str:
    fields = {"finding_id": "R3-F01", "severity": "high", "change_type": "correctness",
              "referenced_files": "[design.md:L10-L20]", "artifact": "design", "round": "3",
              "reviewer": "quality-claude"}
    body = changes.pop("body", "The design drops the retry path; restore it.\n")
    fields.update(changes)
    head = "".join(f"{k}: {v}\n" for k, v in fields.items() if v is not None)
    return f"---\n{head}---\n\n{body}"


CLEAN = "---\nreviewer: quality-claude\nround: 3\nfindings: 0\n---\n"


@pytest.fixture
def run(tmp_path: Path) -> Path:
    """An artifact directory with an empty design round 3."""
    (tmp_path / "config.md").write_text("---\nsecond_reviewer: false\nverifier_enabled: true\n"
                                        "---\n")
    (tmp_path / "reviews" / "design" / "round-03").mkdir(parents=True)
    return tmp_path


def rnd(run: Path) -> Path:
    return run / "reviews" / "design" / "round-03"


def write_payload(path: str | Path, content: str, cwd: str | Path | None = None,
                  tool: str = "Write") -> dict[str, Any]:
    payload: dict[str, Any] = {"hook_event_name": "PreToolUse", "tool_name": tool,
                               "tool_input": {"file_path": str(path), "content": content}}
    if cwd is not None:
        payload["cwd"] = str(cwd)
    return payload


def edit_payload(path: str | Path, tool: str = "Edit") -> dict[str, Any]:
    return {"hook_event_name": "PostToolUse", "tool_name": tool,
            "tool_input": {"file_path": str(path), "old_string": "a", "new_string": "b"},
            "tool_response": {"success": True}}


def causes(decision: Any, level: str = "error") -> list[str]:
    return sorted(d.cause for d in decision.diagnostics if d.level == level)


# -- where a write lands ------------------------------------------------------------------


def test_paths_outside_rounds_are_ignored(run: Path) -> None:
    for path in (run / "notes.md", run / "reviews" / "design" / "round-03-verified.md",
                 run / "reviews" / "telemetry" / "round-01" / "x.json",
                 run / "reviews" / "design" / "notes" / "x.md", rnd(run),
                 rnd(run) / ".quality-claude.finding-F01.md.tmp"):
        assert locate(str(path)) is None
        assert decide(write_payload(path, "x")).action == "ignore"


def test_relative_path_is_resolved_against_payload_cwd(run: Path) -> None:
    target = locate("reviews/design/round-03/quality-claude.finding-F01.md", str(run))
    assert target is not None
    assert (target.step, target.round) == ("design", 3)
    assert target.name == "quality-claude.finding-F01.md"
    assert target.shown == "reviews/design/round-03/quality-claude.finding-F01.md"


def test_dotdot_segments_are_resolved_before_deciding(run: Path) -> None:
    into = run / "elsewhere" / ".." / "reviews" / "design" / "round-03" / "quality-claude.clean.md"
    assert locate(str(into)) is not None
    out = rnd(run) / ".." / ".." / ".." / "quality-claude.clean.md"
    assert locate(str(out)) is None


def test_symlinked_directory_into_a_round_is_resolved(run: Path, tmp_path: Path) -> None:
    link = tmp_path / "shortcut"
    link.symlink_to(rnd(run), target_is_directory=True)
    target = locate(str(link / "quality-claude.finding-F01.md"))
    assert target is not None and target.round_dir == os.path.realpath(rnd(run))
    decision = decide(write_payload(link / "quality-claude.finding-F01.md",
                                    finding(change_type="bug")))
    assert causes(decision) == ["change_type_out_of_enum"]


def test_symlinked_file_inside_a_round_is_symlink_in_round_dir(run: Path, tmp_path: Path) -> None:
    real = tmp_path / "real.md"
    real.write_text(finding())
    (rnd(run) / "quality-claude.finding-F01.md").symlink_to(real)
    decision = decide(write_payload(rnd(run) / "quality-claude.finding-F01.md", finding()))
    assert causes(decision) == ["symlink_in_round_dir"]


def test_task_rounds_are_rounds(run: Path) -> None:
    target = locate(str(run / "reviews" / "tasks" / "task-02" / "round-01" / "x.md"))
    assert target is not None and target.is_task and target.step == "task-02"


def test_a_write_into_a_misnamed_round_dir_is_bad_round_dir_name(run: Path) -> None:
    decision = decide(write_payload(run / "reviews" / "design" / "round-3" /
                                    "quality-claude.finding-F01.md", finding()))
    assert causes(decision) == ["bad_round_dir_name"]
    assert "reviews/design/round-01/" in decision.message


def test_a_subdirectory_in_a_round_is_an_unknown_file(run: Path) -> None:
    decision = decide(write_payload(rnd(run) / "drafts" / "quality-claude.finding-F01.md",
                                    finding()))
    assert causes(decision) == ["unknown_file_in_round_dir"]


# -- pre-write judgement --------------------------------------------------------------------


def test_a_valid_finding_is_allowed_silently(run: Path) -> None:
    decision = decide(write_payload(rnd(run) / "quality-claude.finding-F01.md", finding()))
    assert decision.action == "allow" and decision.message == ""
    assert decision.diagnostics == ()


def test_a_write_that_creates_the_round_directory_is_judged(tmp_path: Path) -> None:
    new_round = tmp_path / "reviews" / "design" / "round-03"
    assert decide(write_payload(new_round / "quality-claude.finding-F01.md",
                                finding())).action == "allow"
    bad = decide(write_payload(new_round / "quality-claude.finding-F01.md", finding(round=4)))
    assert causes(bad) == ["round_mismatch"]


def test_a_write_judged_after_the_fact_reads_the_disk(run: Path) -> None:
    path = rnd(run) / "quality-claude.finding-F01.md"
    path.write_text(finding(severity="x"))
    payload = write_payload(path, finding()) | {"hook_event_name": "PostToolUse"}
    assert causes(decide(payload)) == ["severity_out_of_enum"]
    assert decide(write_payload(path, finding()), event="pre").action == "allow"


def test_a_valid_clean_sentinel_is_allowed(run: Path) -> None:
    assert decide(write_payload(rnd(run) / "quality-claude.clean.md", CLEAN)).action == "allow"


@pytest.mark.parametrize("content, cause", [
    (finding(change_type="corectness"), "change_type_out_of_enum"),
    (finding(severity="critical"), "severity_out_of_enum"),
    (finding(change_type=None, category="correctness"), "missing_change_type"),
    (finding(severity=None), "missing_severity"),
    (finding(finding_id="F01"), "finding_id_malformed"),
    (finding(finding_id=None), "missing_finding_id"),
    (finding(referenced_files="design.md"), "referenced_files_not_list"),
    (finding(referenced_files=None), "missing_referenced_files"),
    (finding(artifact=None), "missing_artifact"),
    (finding(round="three"), "round_not_integer"),
    (finding(round=None), "missing_round"),
    (finding(reviewer=None), "missing_reviewer"),
    (finding(round="4", finding_id="R4-F01"), "round_mismatch"),
    (finding(body="\n"), "missing_message"),
    (finding(body="One.\n\nfinding_id: R3-F02\nTwo.\n"), "combined_findings"),
    (finding().replace("\n", "\r\n"), "crlf_line_endings"),
    ("no fences here\n", "no_frontmatter"),
    ("---\nseverity: [high\n---\n\nx\n", "malformed_yaml"),
    (finding(severity="high\nseverity: low"), "duplicate_key"),
])
def test_each_error_class_blocks_with_cause_and_fix(run: Path, content: str, cause: str) -> None:
    decision = decide(write_payload(rnd(run) / "quality-claude.finding-F01.md", content))
    assert decision.action == "block"
    assert cause in causes(decision)
    assert f"- {cause}" in decision.message
    assert "fix:" in decision.message


def test_message_names_field_found_allowed_and_a_corrected_example(run: Path) -> None:
    decision = decide(write_payload(rnd(run) / "quality-claude.finding-F02.md",
                                    finding(finding_id="R3-F02", change_type="corectness")))
    msg = decision.message
    assert "- change_type_out_of_enum (line 4, field change_type)" in msg
    assert "found:   corectness" in msg
    assert "allowed: style, clarity, correctness, scope, intent" in msg
    assert "example: change_type: correctness" in msg
    assert "Use exactly one of 'style'" in msg  # the catalogue's fix text, as plain text


def test_examples_use_the_round_step_and_tag_of_the_target(run: Path) -> None:
    decision = decide(write_payload(rnd(run) / "scope-claude.finding-F04.md",
                                    finding(finding_id="X", reviewer="quality-claude",
                                            artifact=None, round=None)))
    msg = decision.message
    assert "example: finding_id: R3-F04" in msg
    assert "example: reviewer: scope-claude" in msg
    assert "example: artifact: design" in msg
    assert "example: round: 3" in msg


def test_impersonation_is_reviewer_tag_mismatch(run: Path) -> None:
    decision = decide(write_payload(rnd(run) / "scope-claude.finding-F01.md", finding()))
    assert causes(decision) == ["reviewer_tag_mismatch"]
    clean = decide(write_payload(rnd(run) / "scope-claude.clean.md", CLEAN))
    assert causes(clean) == ["reviewer_tag_mismatch"]


def test_warnings_only_allow(run: Path) -> None:
    content = finding(extra="1").rstrip("\n")  # unknown key, no final newline
    decision = decide(write_payload(rnd(run) / "quality-claude.finding-F01.md", content))
    assert decision.action == "allow" and decision.message == ""
    assert causes(decision, "warning") == ["trailing_newline", "unknown_frontmatter_key"]


def test_errors_also_list_the_warnings(run: Path) -> None:
    decision = decide(write_payload(rnd(run) / "quality-claude.finding-F01.md",
                                    finding(severity="x").rstrip("\n")))
    assert "warnings, not blocking" in decision.message and "trailing_newline" in decision.message


@pytest.mark.parametrize("name, cause", [
    ("notes.md", "unknown_file_in_round_dir"),
    ("raw-stdout.txt", "unknown_file_in_round_dir"),
    ("quality-claude.finding-F1.md", "bad_finding_filename"),
    ("quality_claude.finding-F01.md", "bad_tag_name"),
    ("round-03-verifier-disabled.md.bak", "unknown_file_in_round_dir"),
])
def test_other_names_in_a_round_are_refused(run: Path, name: str, cause: str) -> None:
    decision = decide(write_payload(rnd(run) / name, finding()))
    assert causes(decision) == [cause]
    assert "<tag>.finding-F<NN>.md" in decision.message or cause == "bad_tag_name"


def test_task_round_orchestrator_extras_are_allowed(run: Path) -> None:
    path = run / "reviews" / "tasks" / "task-01" / "round-01" / "visual-fidelity-claude.skipped.md"
    sentinel = "---\nskip_reason: empty_wireframe_paths\npath_filtered: false\n---\n"
    assert decide(write_payload(path, sentinel)).action == "allow"
    assert causes(decide(write_payload(path, "skipped\n"))) == ["vf_sentinel_invalid"]


def test_clean_sentinel_beside_existing_findings_is_refused(run: Path) -> None:
    (rnd(run) / "quality-claude.finding-F01.md").write_text(finding())
    decision = decide(write_payload(rnd(run) / "quality-claude.clean.md", CLEAN))
    assert causes(decision) == ["clean_and_findings_coexist"]
    assert "no quality-claude.clean.md while quality-claude has finding files" in decision.message
    # another tag's clean sentinel is fine
    other = CLEAN.replace("quality-claude", "scope-claude")
    assert decide(write_payload(rnd(run) / "scope-claude.clean.md", other)).action == "allow"


def test_finding_beside_an_existing_clean_sentinel_is_refused(run: Path) -> None:
    (rnd(run) / "quality-claude.clean.md").write_text(CLEAN)
    decision = decide(write_payload(rnd(run) / "quality-claude.finding-F01.md", finding()))
    assert causes(decision) == ["clean_and_findings_coexist"]
    assert "delete the stale quality-claude.clean.md first" in decision.message


def test_duplicate_finding_id_is_refused_either_way_round(run: Path) -> None:
    (rnd(run) / "quality-claude.finding-F02.md").write_text(finding(finding_id="R3-F02"))
    later = decide(write_payload(rnd(run) / "quality-claude.finding-F03.md",
                                 finding(finding_id="R3-F02")))
    assert "duplicate_finding_id" in causes(later)
    earlier = decide(write_payload(rnd(run) / "quality-claude.finding-F01.md",
                                   finding(finding_id="R3-F02")))
    assert "duplicate_finding_id" in causes(earlier)
    other_tag = decide(write_payload(rnd(run) / "scope-claude.finding-F02.md",
                                     finding(finding_id="R3-F02", reviewer="scope-claude")))
    assert other_tag.action == "allow"


def test_defects_of_other_files_do_not_block_a_good_write(run: Path) -> None:
    (rnd(run) / "quality-claude.finding-F01.md").write_text(finding())
    (rnd(run) / "quality-claude.finding-F02.md").write_text(finding())  # duplicate id
    (rnd(run) / "scope-claude.finding-F01.md").write_text(finding(severity="bad"))
    (rnd(run) / "stdout.txt").write_text("raw\n")
    decision = decide(write_payload(rnd(run) / "quality-claude.finding-F03.md",
                                    finding(finding_id="R3-F03")))
    assert decision.action == "allow"


def test_rewriting_a_file_judges_the_new_content_not_the_old(run: Path) -> None:
    (rnd(run) / "quality-claude.finding-F01.md").write_text(finding(severity="bad"))
    assert decide(write_payload(rnd(run) / "quality-claude.finding-F01.md",
                                finding())).action == "allow"


def test_sidecars_are_judged_like_check(run: Path) -> None:
    path = rnd(run) / "quality-claude.finding-F01.score.yml"
    (rnd(run) / "quality-claude.finding-F01.md").write_text(finding())
    assert decide(write_payload(path, "score: 85\nreason: real bug\n")).action == "allow"
    assert causes(decide(write_payload(path, "score: 087\nreason: x\n"))) == ["score_out_of_range"]
    assert causes(decide(write_payload(path, "score: high\nreason: x\n"))) == ["sidecar_malformed"]
    # VERIFY_FAILED is the verifier's legitimate report; the round halts on it, the write does not
    assert decide(write_payload(path, "score: VERIFY_FAILED\nreason: timeout\n")).action == "allow"


def test_non_utf8_and_oversized_content_are_refused(run: Path) -> None:
    path = rnd(run) / "quality-claude.finding-F01.md"
    assert causes(decide(write_payload(path, "\ud800"))) == ["not_utf8"]
    assert "file_too_large" in causes(decide(write_payload(path, finding() + "x" * (1 << 20))))


def test_message_never_contains_raw_control_characters(run: Path) -> None:
    nasty = "\x1b[2J\x1b]0;pwn\x07\r\u202e\x00\x9b"
    content = finding(severity=f'"{nasty}"', change_type=f'"x{nasty}"', reviewer=f'"{nasty}"',
                      finding_id=f'"{nasty}"', body=f"finding_id: {nasty}\n")
    name = "quality-claude.finding-F01.md"
    decision = decide(write_payload(rnd(run) / name, content, cwd=run))
    assert decision.action == "block"
    assert not CONTROL.search(decision.message)
    weird = decide(write_payload(str(rnd(run) / f"notes{nasty.replace(chr(0), '')}.md"), "x"))
    assert weird.action == "block" and not CONTROL.search(weird.message)


# -- post-edit ------------------------------------------------------------------------------


def test_post_edit_judges_the_file_on_disk(run: Path) -> None:
    path = rnd(run) / "quality-claude.finding-F01.md"
    path.write_text(finding(change_type="bugfix"))
    decision = decide(edit_payload(path))
    assert causes(decision) == ["change_type_out_of_enum"]
    assert "your edit was applied" in decision.message
    path.write_text(finding())
    assert decide(edit_payload(path, "MultiEdit")).action == "allow"


def test_post_edit_of_a_missing_file_is_a_hook_failure(run: Path) -> None:
    with pytest.raises(HookFailure):
        decide(edit_payload(rnd(run) / "quality-claude.finding-F01.md"))


def test_post_edit_into_a_clean_and_findings_state_is_refused(run: Path) -> None:
    (rnd(run) / "quality-claude.clean.md").write_text(CLEAN)
    (rnd(run) / "quality-claude.finding-F01.md").write_text(finding())
    decision = decide(edit_payload(rnd(run) / "quality-claude.finding-F01.md"))
    assert causes(decision) == ["clean_and_findings_coexist"]


# -- tools, events and malformed payloads -------------------------------------------------------


def test_tools_the_hook_does_not_know_are_ignored(run: Path) -> None:
    bash = {"hook_event_name": "PreToolUse", "tool_name": "Bash",
            "tool_input": {"command": "rm -rf reviews"}}
    assert decide(bash).action == "ignore"
    read = {"hook_event_name": "PostToolUse", "tool_name": "Read",
            "tool_input": {"file_path": str(rnd(run) / "notes.md")}}
    assert decide(read).action == "ignore"
    # a shell command cannot be judged before it runs, nor a notebook edit
    notebook = {"hook_event_name": "PreToolUse", "tool_name": "NotebookEdit",
                "tool_input": {"notebook_path": str(rnd(run) / "x.ipynb")}}
    assert decide(notebook).action == "ignore"


def test_an_edit_that_would_not_apply_is_allowed_before_it_lands(run: Path) -> None:
    # the file does not exist, so the Edit tool itself refuses the edit
    pre = edit_payload(rnd(run) / "notes.md") | {"hook_event_name": "PreToolUse"}
    decision = decide(pre)
    assert decision.action == "allow" and decision.message == ""


def test_event_comes_from_the_option_or_the_payload() -> None:
    assert event_of({"hook_event_name": "PostToolUse"}) == "post"
    assert event_of({"hook_event_name": "PostToolUse"}, "pre") == "pre"
    with pytest.raises(HookFailure):
        event_of({"hook_event_name": "Stop"})


@pytest.mark.parametrize("payload", [
    {"hook_event_name": "PreToolUse", "tool_name": "Write"},
    {"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": "x"},
    {"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": {"content": "x"}},
    {"hook_event_name": "PreToolUse", "tool_input": {"file_path": "/x", "content": "x"}},
    {"tool_name": "Write", "tool_input": {"file_path": "/x", "content": "x"}},
])
def test_malformed_payloads_are_hook_failures(payload: dict[str, Any]) -> None:
    with pytest.raises(HookFailure):
        decide(payload)


def test_a_write_without_content_into_a_round_is_a_hook_failure(run: Path) -> None:
    payload = write_payload(rnd(run) / "quality-claude.finding-F01.md", "x")
    del payload["tool_input"]["content"]
    with pytest.raises(HookFailure):
        decide(payload)


@pytest.mark.parametrize("raw", [b"", b"{", b"[1]", b"null", b"\xff", b"[" * 100000])
def test_malformed_json_is_a_hook_failure(raw: bytes) -> None:
    with pytest.raises(HookFailure):
        load_payload(raw)


def test_a_no_op_call_imports_nothing_heavy(run: Path) -> None:
    code = ("import json, sys\n"
            "from qrspi_guard.hook import decide\n"
            f"d = decide({json.dumps(write_payload(run / 'notes.md', 'x'))!s})\n"
            "heavy = [m for m in ('yaml', 'pydantic', 'frontmatter', 'qrspi_guard.engine',"
            " 'qrspi_guard.rules.filejudge') if m in sys.modules]\n"
            "print(d.action, heavy)\n")
    code = code.replace("true", "True").replace("false", "False").replace("null", "None")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, check=True).stdout
    assert out.strip() == "ignore []"


# -- parity with check: every fixture file, judged as a write of its own bytes ---------------

#: causes only the round as a whole can show; the hook does not judge them on a write
_ROUND_ONLY = {"sidecar_missing", "orphan_sidecar", "verify_failed", "verified_totals_mismatch",
               "expected_tag_no_output", "unrouted_tag", "fnum_gap", "step_not_on_route",
               # kept-findings.txt is compared with the round's recount (§3); (a sidecar's
               # wrong suffix, which the round's generation decides, the hook judges too)
               "kept_findings_mismatch"}


def _round_files() -> list[Path]:
    files = []
    for path in sorted(FIXTURES.rglob("*")):
        parts = path.relative_to(FIXTURES).parts
        if "reviews" in parts and path.parent.name.startswith("round-") and (
                path.is_file() or path.is_symlink()):
            if locate(str(path)) is not None:
                files.append(path)
    return files


def test_fixture_corpus_is_found() -> None:
    assert len(_round_files()) > 80


@pytest.mark.parametrize("path", _round_files(), ids=lambda p: str(p.relative_to(FIXTURES)))
def test_hook_judges_each_fixture_file_exactly_as_check(path: Path) -> None:
    target = locate(str(path))
    assert isinstance(target, Target)
    if target.symlink or target.round is None or target.nested:
        mine = layout_diagnostics(target)
    else:
        mine = judge(target, path.read_bytes())
    result = check_paths([str(path.parent)])
    theirs = sorted((d.cause, d.line) for d in result.diagnostics
                    if d.file == path.name and d.cause not in _ROUND_ONLY)
    assert sorted((d.cause, d.line) for d in mine if d.file == path.name) == theirs
