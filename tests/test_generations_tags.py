"""generations.md §5: tags, clean sentinels, markers, visual-fidelity files and the
per-task dispatch manifest in real runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.genkit import (
    KEPT,
    causes,
    check,
    fanin_round,
    finding_text,
    new_run,
    of,
    one,
    put,
    sidecar_md,
)
from tests.support import run_main

Q = "quality-claude"
S = "scope-claude"
TASK = "tasks/task-01"
VF = "visual-fidelity-claude"


def clean_text(tag: str, round_no: int | None = 1, extra: str = "") -> str:
    r = f"round: {round_no}\n" if round_no is not None else ""
    return f"---\nreviewer: {tag}\n{r}findings: 0\n{extra}---\n"


# -- tag grammar and routing --------------------------------------------------------


@pytest.mark.parametrize("step", [TASK, "integration-wave-23"])
def test_any_well_formed_tag_is_fine_where_no_matrix_row_applies(tmp_path: Path,
                                                                 step: str) -> None:
    run = new_run(tmp_path)
    d = run.root / "reviews" / step / "round-01"
    artifact = "task-01" if step == TASK else "integration"
    for tag in ("spec-gpt55", "security", "4o-mini", "a"):
        put(d, f"{tag}.finding-F01.md", finding_text(tag, 1, step=artifact))
    result = check(run.root)
    assert not {"bad_tag_name", "unrouted_tag", "expected_tag_no_output"} & set(
        causes(result))
    assert result.rounds[0].reported_tags == ["4o-mini", "a", "security", "spec-gpt55"]


def test_a_well_formed_tag_a_matrix_row_does_not_route_is_unrouted(tmp_path: Path) -> None:
    run = new_run(tmp_path)
    fanin_round(run, "design", 1, [("spec-gpt55", 1, "scope", None)], cleans=[Q, S])
    got = one(check(run.root), "unrouted_tag")
    assert got.tag == "spec-gpt55" and "bad_tag_name" not in causes(check(run.root))


@pytest.mark.parametrize("tag", ["Quality-claude", "-quality", "quality_claude",
                                 "quality.claude", "quality claude", "ü-claude"])
def test_a_tag_outside_the_grammar_is_bad_tag_name(tmp_path: Path, tag: str) -> None:
    run = new_run(tmp_path)
    d = run.round_dir(TASK, 1)
    put(d, f"{tag}.finding-F01.md", finding_text(tag, 1, step="task-01"))
    put(d, f"{tag}.clean.md", clean_text(tag))
    result = check(run.root)
    assert sorted(x.file for x in of(result, "bad_tag_name")) == sorted(
        [f"{tag}.finding-F01.md", f"{tag}.clean.md"])


def test_expect_accepts_every_well_formed_tag_and_words_silence_by_suffix(
        tmp_path: Path) -> None:
    run = new_run(tmp_path)
    d = run.round_dir(TASK, 1)
    put(d, "spec-gpt55.clean.md", clean_text("spec-gpt55"))
    result = check(run.root, expect=("spec-gpt55", "quality-codex", "security", Q))
    silent = {x.tag: x.message for x in of(result, "expected_tag_no_output")}
    assert silent == {"quality-codex": "Reviewer quality-codex produced no output",
                      "security": "Reviewer security wrote no per-finding files",
                      Q: f"Reviewer {Q} wrote no per-finding files"}
    proc = run_main("check", "--expect", "spec-gpt55,gpt-codex-mini,mini-codex", str(run.root))
    assert b"Reviewer mini-codex produced no output" in proc.stdout
    assert b"Reviewer gpt-codex-mini wrote no per-finding files" in proc.stdout
    proc = run_main("check", "--expect", "Bad_Tag", str(run.root))
    assert proc.returncode == 2 and b"Traceback" not in proc.stderr


def test_split_accepts_every_well_formed_tag(tmp_path: Path) -> None:
    d = tmp_path / "art/reviews/tasks/task-01/round-02"
    d.mkdir(parents=True)
    proc = run_main("split", "-", str(d), "spec-gpt55", input=b"NO_FINDINGS\n")
    assert proc.returncode == 0, proc.stderr
    assert (d / "spec-gpt55.clean.md").is_file()
    proc = run_main("split", "-", str(d), "Spec_GPT", input=b"NO_FINDINGS\n")
    assert proc.returncode == 2


# -- findings and clean sentinels ---------------------------------------------------


def test_actual_model_is_allowed_on_findings_and_clean_sentinels(tmp_path: Path) -> None:
    run = new_run(tmp_path)
    d = run.round_dir("design", 1)
    text = finding_text(Q, 1).replace("reviewer: quality-claude\n",
                                      "reviewer: quality-claude\nactual_model: claude-opus-4\n")
    put(d, f"{Q}.finding-F01.md", text)
    put(d, f"{S}.clean.md", clean_text(S, extra="actual_model: gpt-5.5\n"))
    result = check(run.root)
    assert "unknown_frontmatter_key" not in causes(result)
    assert result.rounds[0].status == "ok", causes(result)
    put(d, f"{S}.clean.md", clean_text(S, extra="model: gpt-5.5\n"))
    assert one(check(run.root), "unknown_frontmatter_key").field == "model"


def test_a_clean_sentinel_without_round_is_accepted_in_fan_in_rounds_only(
        tmp_path: Path) -> None:
    run = new_run(tmp_path)
    d = fanin_round(run, "design", 1, [(Q, 1, "scope", 50)])
    put(d, f"{S}.clean.md", clean_text(S, None))  # the fan-in splitter's exact shape
    assert (d / f"{S}.clean.md").read_text() == f"---\nreviewer: {S}\nfindings: 0\n---\n"
    assert causes(check(run.root)) == []
    applyfix = check(run.root, protocol="apply-fix")
    assert one(applyfix, "missing_round").file == f"{S}.clean.md"
    put(d, f"{S}.clean.md", clean_text(S, 2))  # a round given must still agree
    assert one(check(run.root), "round_mismatch").file == f"{S}.clean.md"


def test_a_no_findings_marker_counts_as_a_clean_sentinel_with_a_warning(
        tmp_path: Path) -> None:
    run = new_run(tmp_path)
    d = fanin_round(run, "design", 1, [], cleans=[Q])
    put(d, f"{S}.NO_FINDINGS", "")
    result = check(run.root)
    warn = one(result, "clean_noncanonical")
    assert warn.file == f"{S}.NO_FINDINGS" and warn.level == "warning"
    assert not {"unknown_file_in_round_dir", "expected_tag_no_output"} & set(causes(result))
    assert result.rounds[0].reported_tags == [Q, S]
    put(d, f"{S}.finding-F01.md", finding_text(S, 1))
    assert one(check(run.root), "clean_and_findings_coexist").tag == S
    put(d, "Bad_Tag.NO_FINDINGS", "")
    assert one(check(run.root), "bad_tag_name").file == "Bad_Tag.NO_FINDINGS"


# -- the verifier-disabled marker --------------------------------------------------

IMPLEMENT = "---\nreason: verifier unavailable\nround: 1\ncreated_by: implement\n---\n"
MENU = "---\ntimestamp: 2026-05-01T10:00:00Z\nreason: verifier down\nfinding_count: 2\n---\n"


def _unverified_task_round(tmp_path: Path, gen: str) -> tuple[object, Path]:
    run = new_run(tmp_path)
    d = run.round_dir(TASK, 1)
    put(d, f"{Q}.finding-F01.md", finding_text(Q, 1, step="task-01"))
    if gen == "fan-in":
        put(d, f"{Q}.finding-F02.md", finding_text(Q, 2, step="task-01"))
        put(d, f"{Q}.finding-F02.score.md",
            sidecar_md(None, "failed", "failure_reason: timed out\n"))
        put(d, KEPT, "")
    else:
        put(d, f"{Q}.finding-F02.md", finding_text(Q, 2, step="task-01"))
        put(d, f"{Q}.finding-F02.score.yml", "score: VERIFY_FAILED\nreason: timed out\n")
        run.write(f"reviews/{TASK}/round-01-verified.md",
                  "---\nscored: 0\nkept: 2\ndropped: 0\nfailed: 1\nclean: 0\n---\n")
    return run, d


@pytest.mark.parametrize("marker", [IMPLEMENT, MENU,
                                    IMPLEMENT.replace("round: 1", "round: 01"),
                                    MENU.replace("2026-05-01T10:00:00Z", "'2026-05-01 10:00'")],
                         ids=["implement", "menu", "round-01", "string-timestamp"])
@pytest.mark.parametrize("where", ["inside", "beside"])
@pytest.mark.parametrize("gen", ["fan-in", "apply-fix"])
def test_a_well_formed_marker_in_either_schema_waives_the_sidecar_rules(
        tmp_path: Path, marker: str, where: str, gen: str) -> None:
    run, d = _unverified_task_round(tmp_path, gen)
    assert {"sidecar_missing", "verify_failed"} <= set(causes(check(run.root)))
    put(d if where == "inside" else d.parent, "round-01-verifier-disabled.md", marker)
    result = check(run.root)
    assert result.rounds[0].protocol == gen
    assert not {"sidecar_missing", "verify_failed", "verifier_marker_invalid"} & set(
        causes(result))


BAD_MARKERS = [
    ("", "empty"), ("Verifier skipped by the user.\n", "frontmatter"),
    ("---\nround: 1\ncreated_by: implement\n---\n", "reason"),
    ("---\nreason: '   '\nround: 1\ncreated_by: implement\n---\n", "reason"),
    ("---\nreason: x\nround: 2\ncreated_by: implement\n---\n", "round"),
    ("---\nreason: x\ncreated_by: implement\n---\n", "round"),
    ("---\nreason: x\nround: 1\n---\n", "created_by"),
    ("---\nreason: x\nround: 1\ncreated_by: ''\n---\n", "created_by"),
    ("---\nreason: x\nfinding_count: 2\n---\n", "timestamp"),
    ("---\ntimestamp: 2026-05-01\nreason: x\n---\n", "finding_count"),
    ("---\ntimestamp: 2026-05-01\nfinding_count: 2\n---\n", "reason"),
    ("---\nreason: [unclosed\n---\n", "YAML"),
]


@pytest.mark.parametrize("marker, said", BAD_MARKERS)
@pytest.mark.parametrize("where", ["inside", "beside"])
def test_a_malformed_marker_is_a_warning_and_the_sidecar_rules_apply(
        tmp_path: Path, marker: str, said: str, where: str) -> None:
    run, d = _unverified_task_round(tmp_path, "fan-in")
    put(d if where == "inside" else d.parent, "round-01-verifier-disabled.md", marker)
    result = check(run.root)
    warn = one(result, "verifier_marker_invalid")
    assert warn.level == "warning" and said in warn.message
    assert warn.file == "round-01-verifier-disabled.md"
    assert {"sidecar_missing", "verify_failed"} <= set(causes(result))


@pytest.mark.parametrize("extra", ["round: 1\n", "created_by: orchestrator\n"])
def test_a_menu_marker_with_an_extra_implement_key_still_waives(tmp_path: Path,
                                                                extra: str) -> None:
    run, d = _unverified_task_round(tmp_path, "fan-in")
    put(d.parent, "round-01-verifier-disabled.md", MENU.removesuffix("---\n") + extra + "---\n")
    result = check(run.root)
    assert not {"sidecar_missing", "verify_failed", "verifier_marker_invalid"} & set(
        causes(result))


# -- visual-fidelity files (tasks) -----------------------------------------------------


@pytest.mark.parametrize("reason", ["visual_fidelity_required_false",
                                    "missing_visual_fidelity_check", "empty_wireframe_paths",
                                    "empty_screenshot_paths"])
@pytest.mark.parametrize("path_filtered", [None, "true", "false"])
def test_a_valid_skip_sentinel_stands_for_the_visual_fidelity_output(
        tmp_path: Path, reason: str, path_filtered: str | None) -> None:
    run = new_run(tmp_path)
    d = run.round_dir(TASK, 1)
    pf = f"path_filtered: {path_filtered}\n" if path_filtered else ""
    put(d, f"{VF}.skipped.md", f"---\nskip_reason: {reason}\n{pf}---\n")
    put(d, f"{Q}.clean.md", clean_text(Q))
    result = check(run.root, expect=(Q, VF))
    assert causes(result) == []
    assert result.rounds[0].reported_tags == [Q, VF]


@pytest.mark.parametrize("text, field", [
    ("---\nskip_reason: no_wireframes\n---\n", "skip_reason"),
    ("---\npath_filtered: true\n---\n", "skip_reason"),
    ("---\nskip_reason: empty_wireframe_paths\npath_filtered: maybe\n---\n", "path_filtered"),
    ("---\nskip_reason: empty_wireframe_paths\npath_filtered: 'true'\n---\n",
     "path_filtered"),
    ("---\nskip_reason: [empty_wireframe_paths]\n---\n", "skip_reason"),
    ("skipped, no wireframes\n", None), ("", None), ("---\nskip_reason: [\n---\n", None),
])
def test_an_invalid_skip_sentinel_is_one_error_and_the_tag_is_silent(
        tmp_path: Path, text: str, field: str | None) -> None:
    run = new_run(tmp_path)
    d = run.round_dir(TASK, 1)
    put(d, f"{VF}.skipped.md", text)
    result = check(run.root, expect=(VF,))
    bad = one(result, "vf_sentinel_invalid")
    assert bad.level == "error" and bad.file == f"{VF}.skipped.md"
    if field:
        assert bad.field == field
    # the tag counts as silent (still awaited), and that is the same defect: one
    # diagnostic, whose fix (a known skip_reason) is the one that helps
    assert of(result, "expected_tag_no_output") == []
    assert VF not in result.rounds[0].reported_tags
    assert result.rounds[0].awaiting == [VF]


BYPASS = f"""---
finding_id: R1-bypass-01
severity: high
change_type: correctness
referenced_files: [visual-fidelity-claude.skipped.md]
artifact: task-01
round: 1
reviewer: {VF}
---

The skip sentinel carried an unknown skip_reason; logged as a bypass attempt.
"""


def test_a_bypass_record_is_judged_with_the_finding_rules(tmp_path: Path) -> None:
    run = new_run(tmp_path)
    d = run.round_dir(TASK, 1)
    put(d, f"{VF}.bypass-attempt-01.md", BYPASS)
    put(d, f"{Q}.clean.md", clean_text(Q))
    assert causes(check(run.root)) == []
    put(d, f"{VF}.bypass-attempt-01.md", BYPASS.replace("R1-bypass-01", "R1-F01"))
    assert one(check(run.root), "finding_id_malformed").file == f"{VF}.bypass-attempt-01.md"
    put(d, f"{VF}.bypass-attempt-01.md", BYPASS.replace("severity: high\n", "")
        .replace("round: 1", "round: 2"))
    got = causes(check(run.root), f"{VF}.bypass-attempt-01.md")
    assert "missing_severity" in got and "round_mismatch" in got


@pytest.mark.parametrize("name, text", [
    (f"{VF}.skipped.md", "---\nskip_reason: empty_wireframe_paths\n---\n"),
    (f"{VF}.bypass-attempt-01.md", BYPASS.replace("task-01", "design")),
    ("path-filtered.md", "note\n"), (f"{VF}.path-filtered.md", "note\n"),
])
def test_visual_fidelity_files_outside_task_rounds_are_unknown(tmp_path: Path, name: str,
                                                               text: str) -> None:
    run = new_run(tmp_path)
    d = fanin_round(run, "design", 1, [], cleans=[Q, S])
    put(d, name, text)
    assert one(check(run.root), "unknown_file_in_round_dir").file == name


# -- the per-task dispatch manifest -------------------------------------------------


def _manifest(entries: object) -> str:
    return json.dumps(entries, indent=2) + "\n"


def test_a_manifest_sets_a_task_rounds_expected_tags_whatever_the_status(
        tmp_path: Path) -> None:
    run = new_run(tmp_path)
    d = run.round_dir(TASK, 1)
    put(d, ".dispatch-manifest.json", _manifest([
        {"tag": Q, "status": "complete-with-findings", "mode": "first_party"},
        {"tag": "quality-codex", "status": "failed", "mode": "background"},
        {"tag": "spec-gpt55", "status": "dispatched"}, {"tag": Q, "status": "pending"}]))
    put(d, f"{Q}.clean.md", clean_text(Q))
    put(d, f"{S}.clean.md", clean_text(S))
    result = check(run.root)
    assert result.rounds[0].expected_tags == [Q, "quality-codex", "spec-gpt55"]
    assert sorted(x.tag for x in of(result, "expected_tag_no_output")) == [
        "quality-codex", "spec-gpt55"]
    assert one(result, "unrouted_tag").tag == S
    over = check(run.root, expect=(Q, S))  # --expect overrides the manifest
    assert not {"expected_tag_no_output", "unrouted_tag"} & set(causes(over))


@pytest.mark.parametrize("content", [
    "{not json", '{"tag": "quality-claude"}', '["quality-claude"]',
    '[{"agent": "qrspi-reviewer"}]', '[{"tag": 7}]', '[{"tag": "Bad_Tag"}]', "",
    '[{"tag": "quality-claude"}, 3]',
])
def test_a_malformed_manifest_is_a_warning_and_the_round_has_no_expected_set(
        tmp_path: Path, content: str) -> None:
    run = new_run(tmp_path)
    d = run.round_dir(TASK, 1)
    put(d, ".dispatch-manifest.json", content)
    put(d, "spec-gpt55.clean.md", clean_text("spec-gpt55"))
    result = check(run.root)
    assert one(result, "dispatch_manifest_malformed").level == "warning"
    assert not {"expected_tag_no_output", "unrouted_tag"} & set(causes(result))
    assert result.rounds[0].expected_tags == []


def test_a_manifest_in_an_artifact_round_does_not_replace_the_matrix(tmp_path: Path) -> None:
    run = new_run(tmp_path)
    d = fanin_round(run, "design", 1, [], cleans=[Q])
    put(d, ".dispatch-manifest.json", _manifest([{"tag": Q}, {"tag": "spec-gpt55"}]))
    result = check(run.root)
    assert one(result, "expected_tag_no_output").tag == S
    assert "dispatch_manifest_malformed" not in causes(result)


@pytest.mark.parametrize("tag, allowed", [("spec-gpt55", True), ("security", True),
                                          ("Spec_GPT", False)])
def test_the_hook_accepts_every_well_formed_tag(tmp_path: Path, tag: str,
                                                allowed: bool) -> None:
    run = new_run(tmp_path)
    d = run.round_dir(TASK, 1)
    path = d / f"{tag}.finding-F01.md"
    payload = {"session_id": "s", "cwd": str(run.root), "hook_event_name": "PreToolUse",
               "tool_name": "Write",
               "tool_input": {"file_path": str(path),
                              "content": finding_text(tag, 1, step="task-01")}}
    proc = run_main("hook", "--event", "pre", input=json.dumps(payload).encode())
    assert proc.returncode == (0 if allowed else 2), proc.stderr
    if not allowed:
        assert b"bad_tag_name" in proc.stderr
