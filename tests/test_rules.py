"""Unit tests of the pure core: per-file rules, tag and round rules, config reading."""

from __future__ import annotations

from pathlib import Path

import pytest

from qrspi_guard import check
from qrspi_guard.contract.layout import classify
from qrspi_guard.rules.facts import Place
from qrspi_guard.rules.filejudge import judge_file
from tests.support import Run

PLACE = Place("reviews/design/round-03/quality-claude.finding-F02.md", "design", 3)
NAME = classify("quality-claude.finding-F02.md")


def finding(**fields: str) -> bytes:
    base = {"finding_id": "R3-F02", "severity": "high", "change_type": "correctness",
            "referenced_files": "[design.md:L120-L134]", "artifact": "design", "round": "3",
            "reviewer": "quality-claude"}
    base.update(fields)
    lines = [f"{k}: {v}" for k, v in base.items() if v is not None and v != "<absent>"]
    return ("---\n" + "\n".join(lines) + "\n---\n\nThe trade-off section buries the decision.\n"
            ).encode()


def causes(data: bytes, name: str = "quality-claude.finding-F02.md",
           place: Place = PLACE) -> list[str]:
    return [d.cause for d in judge_file(classify(name), data, place).diagnostics]


def test_canonical_finding_has_no_diagnostics() -> None:
    assert causes(finding()) == []


@pytest.mark.parametrize("raw, expected", [
    ("08", []), ("010", ["round_mismatch"]), ("3", []), ('"3"', ["round_not_integer"]),
    ("0", ["round_not_integer"]), ("-3", ["round_not_integer"]), ("3.0", ["round_not_integer"]),
    ("true", ["round_not_integer"]), ("[3]", ["round_not_integer"]),
    ("0x03", ["round_not_integer"]),
    ("03", []),
])
def test_round_is_read_base_10_from_the_raw_scalar(raw: str, expected: list[str]) -> None:
    place = Place(PLACE.path, "design", 8 if raw == "08" else 3)
    fid = "R8-F02" if raw == "08" else "R3-F02"
    assert causes(finding(round=raw, finding_id=fid), place=place) == expected


def test_round_010_is_round_10() -> None:
    place = Place(PLACE.path, "design", 10)
    assert causes(finding(round="010", finding_id="R10-F02"), place=place) == []


def test_category_is_not_an_alias_and_the_message_says_so() -> None:
    data = finding(change_type="<absent>", category="correctness")
    report = judge_file(NAME, data, PLACE)
    (d,) = report.diagnostics
    assert d.cause == "missing_change_type"
    assert "category" in d.message and "not accepted" in d.message


@pytest.mark.parametrize("value, cause", [
    ("corectness", "change_type_out_of_enum"), ("Correctness", "change_type_out_of_enum"),
    ("3", "change_type_out_of_enum"), ("[style]", "change_type_out_of_enum"),
    ("{a: b}", "change_type_out_of_enum"), ("", "change_type_out_of_enum"),
    ("<absent>", "missing_change_type"),
])
def test_missing_and_out_of_enum_are_distinct_and_never_coerced(value: str, cause: str) -> None:
    assert causes(finding(change_type=value)) == [cause]


@pytest.mark.parametrize("fields, expected", [
    ({"finding_id": "<absent>"}, ["missing_finding_id"]),
    ({"finding_id": "R3-F2x"}, ["finding_id_malformed"]),
    ({"finding_id": "R3-F02\\n"}, ["finding_id_malformed"]),
    ({"finding_id": "R٣-F02"}, ["finding_id_malformed"]),  # non-ASCII digit
    ({"severity": "<absent>"}, ["missing_severity"]),
    ({"severity": "critical"}, ["severity_out_of_enum"]),
    ({"severity": "7"}, ["severity_out_of_enum"]),
    ({"referenced_files": "<absent>"}, ["missing_referenced_files"]),
    ({"referenced_files": "design.md"}, ["referenced_files_not_list"]),
    ({"referenced_files": "[1, 2]"}, ["referenced_files_not_list"]),
    ({"referenced_files": "[]"}, []),
    ({"referenced_files": "['../x.md', 'a b.md', 'x.md:L3-9', 'x.md:12-14', 'x.md:L1']"},
     ["referenced_files_malformed"] * 3),
    ({"artifact": "<absent>"}, ["missing_artifact"]),
    ({"artifact": "plan"}, ["artifact_step_mismatch"]),
    ({"reviewer": "<absent>"}, ["missing_reviewer"]),
    ({"reviewer": "scope-claude"}, ["reviewer_tag_mismatch"]),
    ({"round": "<absent>"}, ["missing_round"]),
    ({"finding_id": "R4-F02"}, ["round_mismatch"]),
    ({"finding_id": "R3-F05"}, ["fnum_mismatch"]),
    ({"extra": "1"}, ["unknown_frontmatter_key"]),
])
def test_field_rules(fields: dict[str, str], expected: list[str]) -> None:
    assert causes(finding(**fields)) == expected


def test_field_diagnostics_carry_line_field_and_escaped_value() -> None:
    (d,) = judge_file(NAME, finding(severity='"hi\\x1b[2J"'), PLACE).diagnostics
    assert d.line == 3 and d.field == "severity"
    assert d.value == "hi\\x1b[2J" and "\x1b" not in d.message


def test_untrusted_values_are_cut_to_200_characters() -> None:
    (d,) = judge_file(NAME, finding(severity="x" * 5000), PLACE).diagnostics
    assert d.value is not None and len(d.value) <= 200
    assert len(d.message) < 400


@pytest.mark.parametrize("body, expected", [
    ("\n\n   \n", ["missing_message"]),
    ("First finding.\n\nfinding_id: R3-F03\nmore\n", ["combined_findings"]),
    ("First.\n<<<FINDING-BOUNDARY>>>\n---\nx: 1\n", ["combined_findings"]),
    ("A rule below is fine.\n\n---\n\nStill one finding.\n", []),
    ("Mentions finding_id: inline, which is fine.\n", []),
])
def test_body_rules(body: str, expected: list[str]) -> None:
    head = finding().split(b"\n---\n", 1)[0] + b"\n---\n"
    assert causes(head + body.encode()) == expected


@pytest.mark.parametrize("data, expected", [
    (b"", ["no_frontmatter"]),
    (b"no fences\n", ["no_frontmatter"]),
    (b"--- \nseverity: high\n---\nx\n", ["no_frontmatter"]),
    (b"---\nseverity: [high\n---\nbody\n", ["malformed_yaml"]),
    (b"---\n- a\n- b\n---\nbody\n", ["malformed_yaml"]),
    (b"---\nx: !!python/object/apply:os.system ['true']\n---\nbody\n", ["malformed_yaml"]),
    (b"---\nx: !custom 1\n---\nbody\n", ["malformed_yaml"]),
    (b"\xff\xfe---\n", ["not_utf8"]),
])
def test_document_level_failures(data: bytes, expected: list[str]) -> None:
    assert causes(data) == expected


def test_malformed_yaml_carries_the_yaml_error_line() -> None:
    (d,) = judge_file(NAME, b"---\nseverity: high\nchange_type: [x\n---\nbody\n", PLACE).diagnostics
    assert d.cause == "malformed_yaml" and d.line in (3, 4)


def test_duplicate_key_is_reported_with_its_line() -> None:
    data = finding().replace(b"severity: high\n", b"severity: high\nseverity: low\n")
    ds = judge_file(NAME, data, PLACE).diagnostics
    assert [(d.cause, d.line) for d in ds] == [("duplicate_key", 4)]


def test_bom_is_a_warning_and_crlf_an_error() -> None:
    assert causes(b"\xef\xbb\xbf" + finding()) == ["utf8_bom"]
    assert causes(finding().replace(b"\n", b"\r\n")) == ["crlf_line_endings"]


def test_trailing_newline_warning() -> None:
    assert causes(finding() + b"\n") == ["trailing_newline"]
    assert causes(finding().rstrip(b"\n")) == ["trailing_newline"]


def test_file_too_large_is_not_parsed() -> None:
    assert causes(finding() + b"x" * (1024 * 1024)) == ["file_too_large"]


def test_alias_bomb_is_refused_before_it_is_expanded_and_deep_nesting_does_not_crash() -> None:
    bomb = "\n".join(["a: &a [x, x, x, x, x, x, x, x, x]"] + [
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
        f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]" for i in range(9)])
    data = f"---\n{bomb}\nseverity: *j\n---\nbody\n".encode()
    # an alias is refused (line-based readers would see `*j`), before anything expands it
    assert causes(data) == ["malformed_yaml"]
    deep = b"---\nseverity: " + b"[" * 50000 + b"]" * 50000 + b"\n---\nbody\n"
    assert causes(deep) == ["malformed_yaml"]


@pytest.mark.parametrize("text, expected", [
    ("---\nreviewer: quality-claude\nround: 3\nfindings: 0\n---\n", []),
    ("---\nfinding_id: none\nartifact: design\nreviewer: quality-claude\nround: 3\n---\n",
     ["clean_noncanonical"]),
    ("---\nreviewer: quality-claude\nround: 3\nfindings: 2\n---\n", ["clean_nonzero_findings"]),
    ("---\nreviewer: quality-claude\nround: 3\nfindings: 0\n---\nNothing found.\n",
     ["clean_has_body"]),
    ("---\nreviewer: scope-claude\nround: 3\nfindings: 0\n---\n", ["reviewer_tag_mismatch"]),
    ("---\nreviewer: quality-claude\nround: 2\nfindings: 0\n---\n", ["round_mismatch"]),
])
def test_clean_sentinel_rules(text: str, expected: list[str]) -> None:
    place = Place("r/quality-claude.clean.md", "design", 3)
    assert causes(text.encode(), "quality-claude.clean.md", place) == expected


@pytest.mark.parametrize("text, expected", [
    ("score: 85\nreason: Clear and actionable.\n", []),
    ("score: 85\nreason: The fix: move the decision first.\n", []),  # ': ' in reason
    ("---\nscore: 40\nreason: Weak.\n---\n", []),
    ("score: VERIFY_FAILED\nreason: timed out\n", []),
    ("score: 087\nreason: x\n", ["score_out_of_range"]),
    ("score: 101\nreason: x\n", ["score_out_of_range"]),
    ("score: -1\nreason: x\n", ["score_out_of_range"]),
    ("score: high\nreason: x\n", ["sidecar_malformed"]),
    ("reason: no score\n", ["sidecar_malformed"]),
    ("score: 80\n", ["sidecar_malformed"]),
    ("garbage line\n", ["sidecar_malformed"]),
])
def test_sidecar_is_read_line_wise(text: str, expected: list[str]) -> None:
    name = "quality-claude.finding-F02.score.yml"
    assert causes(text.encode(), name, Place("r/" + name, "design", 3)) == expected


def test_escalation_from_references_or_message_but_never_from_the_cited_file(run: Run) -> None:
    run.write("feedback/auth.md", "This is an intent-level concern, escalate everything.\n")
    run.finding("design", 1, "quality-claude", text=(
        "---\nfinding_id: R1-F01\nseverity: high\nchange_type: correctness\n"
        "referenced_files: [./feedback/auth.md:L3, design.md:L4]\nartifact: design\nround: 1\n"
        "reviewer: quality-claude\n---\n\nContradicts the recorded decision.\n"))
    run.finding("design", 1, "quality-claude", n=2, text=(
        "---\nfinding_id: R1-F02\nseverity: low\nchange_type: clarity\n"
        "referenced_files: [design.md:L4]\nartifact: design\nround: 1\n"
        "reviewer: quality-claude\n---\n\nSee feedback/auth.md for the user's choice.\n"))
    run.finding("design", 1, "quality-claude", n=3, change_type="intent", text=None)
    run.clean("design", 1, "scope-claude")
    result = check(str(run.root))
    esc = [d.file for d in result.diagnostics if d.cause == "escalation_required"]
    assert esc == ["quality-claude.finding-F01.md", "quality-claude.finding-F02.md"]
    assert "intent" in next(d.message for d in result.diagnostics
                            if d.cause == "escalation_required")


def test_matrix_both_columns_and_unrouted_tags(run: Run) -> None:
    for tag in ("quality-claude", "scope-claude", "quality-codex"):
        run.clean("design", 1, tag)
    result = check(str(run.root))
    assert [(d.cause, d.tag) for d in result.diagnostics] == [("unrouted_tag", "quality-codex")]
    result = check(str(run.root), second_reviewer=True)
    assert [(d.cause, d.tag) for d in result.diagnostics] == [
        ("expected_tag_no_output", "scope-codex")]
    assert result.diagnostics[0].message == "Reviewer scope-codex produced no output"


def test_integration_serves_two_rows(run: Run) -> None:
    run.clean("integration", 1, "implement-gate-claude")
    assert check(str(run.root)).diagnostics == []
    run.clean("integration", 2, "integration-claude")
    run.clean("integration", 2, "security-claude")
    assert check(str(run.root)).diagnostics == []
    run.clean("integration", 3, "integration-claude")
    result = check(str(run.root))
    assert [(d.cause, d.tag) for d in result.diagnostics] == [
        ("expected_tag_no_output", "security-claude")]


def test_task_rounds_have_no_row_unless_expect(run: Run) -> None:
    d = run.root / "reviews" / "tasks" / "task-03" / "round-01"
    d.mkdir(parents=True)
    (d / "quality-claude.clean.md").write_text(
        "---\nreviewer: quality-claude\nround: 1\nfindings: 0\n---\n")
    assert check(str(run.root)).diagnostics == []
    result = check(str(run.root), expect=["quality-claude", "spec-claude"])
    assert [(x.cause, x.tag) for x in result.diagnostics] == [
        ("expected_tag_no_output", "spec-claude")]


def test_tag_rules_duplicates_gaps_coexistence_orphans(run: Run) -> None:
    run.finding("design", 1, "quality-claude", n=1)
    run.finding("design", 1, "quality-claude", n=3)
    run.write("reviews/design/round-01/quality-claude.finding-F03.md",
              (run.root / "reviews/design/round-01/quality-claude.finding-F03.md").read_text()
              .replace("R1-F03", "R1-F01"))
    run.clean("design", 1, "quality-claude")
    run.write("reviews/design/round-01/scope-claude.finding-F01.score.yml",
              "score: 90\nreason: x\n")
    run.clean("design", 1, "scope-claude")
    got = sorted(d.cause for d in check(str(run.root)).diagnostics)
    # F03's id repeats F01's: one defect, so its fnum_mismatch says nothing more
    assert got == ["clean_and_findings_coexist", "duplicate_finding_id", "fnum_gap",
                   "orphan_sidecar"]


def _verified_round(run: Run, totals: str, sidecars: dict[int, str]) -> None:
    run.config("second_reviewer: false\nverifier_enabled: true\n")
    run.finding("design", 1, "quality-claude", n=1, change_type="style")
    run.finding("design", 1, "quality-claude", n=2, change_type="scope")
    run.finding("design", 1, "quality-claude", n=3, change_type="correctness")
    run.clean("design", 1, "scope-claude")
    for n, score in sidecars.items():
        run.write(f"reviews/design/round-01/quality-claude.finding-F{n:02d}.score.yml",
                  f"score: {score}\nreason: ok\n")
    run.write("reviews/design/round-01-verified.md", f"---\n{totals}---\n\nAssembled.\n")


def test_verified_totals_recount_matches(run: Run) -> None:
    # F01 style 50 -> dropped; F02 scope 10 -> kept (never dropped); F03 failed
    _verified_round(run, "scored: 2\nkept: 2\ndropped: 1\nfailed: 1\nclean: 1\n",
                    {1: "50", 2: "10", 3: "VERIFY_FAILED"})
    got = [d.cause for d in check(str(run.root)).diagnostics]
    assert got == ["verify_failed"]


def test_verified_totals_mismatch_and_sidecar_missing(run: Run) -> None:
    _verified_round(run, "scored: 3\nkept: 3\ndropped: 0\nfailed: 0\nclean: 1\n", {1: "90"})
    got = sorted(d.cause for d in check(str(run.root)).diagnostics)
    assert got == ["sidecar_missing", "sidecar_missing", "verified_totals_mismatch"]
    msg = next(d.message for d in check(str(run.root)).diagnostics if d.cause == "sidecar_missing")
    assert msg == "Sidecar missing for finding quality-claude.R1-F02"


def test_verifier_disabled_file_waives_sidecars_and_verify_failed(run: Run) -> None:
    _verified_round(run, "scored: 0\nkept: 3\ndropped: 0\nfailed: 1\nclean: 1\n",
                    {1: "VERIFY_FAILED"})
    run.write("reviews/design/round-01-verifier-disabled.md",
              "---\ntimestamp: 2026-05-05T15:30:00Z\nreason: verifier timed out\n"
              "finding_count: 3\n---\n")
    assert [d.cause for d in check(str(run.root)).diagnostics] == []


@pytest.mark.parametrize("marker", [
    "",  # zero bytes
    "user chose skip\n",  # no frontmatter
    "---\nreason: skip\nround: 2\ncreated_by: user\n---\n",  # another round
    "---\nreason: '  '\nround: 1\ncreated_by: user\n---\n",  # blank reason
    "---\ntimestamp: 2026-05-05T15:30:00Z\nreason: skip\n---\n",  # no finding_count
], ids=["empty", "prose", "other-round", "blank-reason", "no-count"])
def test_a_malformed_verifier_marker_waives_nothing(run: Run, marker: str) -> None:
    _verified_round(run, "scored: 0\nkept: 3\ndropped: 0\nfailed: 1\nclean: 1\n",
                    {1: "VERIFY_FAILED"})
    run.write("reviews/design/round-01-verifier-disabled.md", marker)
    got = {d.cause: d.level for d in check(str(run.root)).diagnostics}
    assert got.get("verifier_marker_invalid") == "warning"
    assert "verify_failed" in got and "sidecar_missing" in got


def test_an_implement_marker_inside_a_task_round_waives_its_sidecars(run: Run) -> None:
    run.config("second_reviewer: false\nverifier_enabled: true\n")
    run.finding("tasks/task-02", 3, "quality-claude", artifact="task-02")
    run.write("reviews/tasks/task-02/round-03/round-03-verifier-disabled.md",
              "---\nreason: user approved\nround: 3\ncreated_by: main-chat\n---\n")
    assert [d.cause for d in check(str(run.root), require_sidecars=True).diagnostics] == []


def test_sidecar_missing_is_a_warning_for_plan(run: Run) -> None:
    run.config("second_reviewer: false\nverifier_enabled: true\n")
    tags = ["quality", "scope", "spec", "security", "goal-traceability", "test-coverage",
            "silent-failure"]
    run.finding("plan", 1, "quality-claude")
    for t in tags[1:]:
        run.clean("plan", 1, f"{t}-claude")
    result = check(str(run.root), require_sidecars=True)
    assert [(d.cause, d.level) for d in result.diagnostics] == [("sidecar_missing", "warning")]


@pytest.mark.parametrize("config, expected", [
    ("second_reviewer: false\nverifier_enabled: false\n", []),
    ("codex_reviews: false\nverifier_enabled: false\n", ["config_legacy_key"]),
    ("second_reviewer: true\ncodex_reviews: false\nverifier_enabled: false\n",
     ["config_key_conflict"]),  # the older key goes with the conflict's one fix
    ("verifier_enabled: false\n", ["config_field_missing"]),
    ("second_reviewer: maybe\nverifier_enabled: false\n", ["config_field_invalid"]),
    ("second_reviewer: false\n", ["config_field_defaulted"]),
    ("second_reviewer: false  # quick run\nverifier_enabled: false\n", ["config_inline_comment"]),
    ("second_reviewer: false\nverifier_enabled: false\nroute: [goals]\n", ["step_not_on_route"]),
    ("second_reviewer: false\nverifier_enabled: false\nroute: design\n", ["config_field_invalid"]),
    ("second_reviewer: false\nverifier_enabled: false\npipeline: fast\n",
     ["config_field_invalid"]),
])
def test_config_reading(run: Run, config: str, expected: list[str]) -> None:
    run.config(config)
    run.clean("design", 1, "quality-claude")
    run.clean("design", 1, "scope-claude")
    assert sorted(d.cause for d in check(str(run.root)).diagnostics) == sorted(expected)


def test_config_key_after_frontmatter_warns_and_yaml_meaning_wins(run: Run) -> None:
    run.write("config.md", "---\nsecond_reviewer: false\nverifier_enabled: false\n---\n\n"
              "second_reviewer: true\n")
    run.clean("design", 1, "quality-claude")
    run.clean("design", 1, "scope-claude")
    assert [d.cause for d in check(str(run.root)).diagnostics] == [
        "config_key_outside_frontmatter"]


def test_broken_config_skips_the_matrix_but_not_per_file_rules(run: Run) -> None:
    run.config("verifier_enabled: false\n")
    run.finding("design", 1, "quality-claude", severity="urgent")
    got = sorted(d.cause for d in check(str(run.root)).diagnostics)
    assert got == ["config_field_missing", "severity_out_of_enum"]


def test_config_is_never_looked_up_further(tmp_path: Path) -> None:
    outer = Run(tmp_path).config()
    inner = Run(tmp_path / "docs" / "run")
    inner.clean("research", 1, "quality-claude")
    assert [d.cause for d in check(str(inner.root)).diagnostics] == ["config_missing"]
    assert outer.root == tmp_path


def test_layout_skips_and_legacy(run: Run) -> None:
    run.clean("research", 1, "quality-claude")
    run.write("reviews/telemetry/round-01/metrics.json", "{}")
    run.write("reviews/ci/notes.md", "ci")
    run.write("reviews/design-loop-pause-round-02.md", "paused")
    run.write("reviews/design/round-01-claude.md", "old single-file round")
    run.write("reviews/spec-109/round-01-claude.md", "old")
    run.write("reviews/design/notes/round.md", "not a round")
    (run.root / "reviews/design/round-00").mkdir()
    got = sorted(d.cause for d in check(str(run.root)).diagnostics)
    assert got == ["bad_round_dir_name", "legacy_layout", "legacy_layout"]


def test_an_unknown_step_directory_with_rounds_is_judged_like_a_task_round(run: Run) -> None:
    run.finding("integration-wave-23", 1, "quality-claude", artifact="integration",
                change_type="corectness")
    run.clean("integration-wave-23", 1, "spec-gpt55")
    got = [(d.cause, d.level) for d in check(str(run.root)).diagnostics]
    # per-file rules apply, the matrix does not (no unrouted_tag, no expected tags)
    assert got == [("unknown_step_dir", "warning"), ("change_type_out_of_enum", "error")]


def test_round_dir_entries(run: Run, tmp_path: Path) -> None:
    run.clean("research", 1, "quality-claude")
    d = run.round_dir("research", 1)
    (d / ".tmp-quality-claude.finding-F01.md").write_text("half")  # hidden: ignored
    (d / "raw-stdout.txt").write_text("dump")
    (d / "quality-claude.finding-F1.md").write_text("x")
    (d / "Quality-claude.clean.md").write_text("x")
    (d / "notes.md~").write_text("x")
    target = tmp_path / "elsewhere.md"
    target.write_text("---\nreviewer: quality-claude\n---\n")
    (d / "quality-codex.clean.md").symlink_to(target)
    os_fifo = d / "scope-claude.finding-F01.md"
    import os

    os.mkfifo(os_fifo)
    got = sorted(x.cause for x in check(str(run.root), second_reviewer=False).diagnostics)
    assert got == ["bad_finding_filename", "bad_tag_name", "symlink_in_round_dir",
                   "unknown_file_in_round_dir", "unknown_file_in_round_dir", "unreadable_file",
                   "unrouted_tag", "unrouted_tag"]  # quality-codex and scope-claude


def test_sidecar_score_given_twice_is_a_duplicate_key() -> None:
    name = "quality-claude.finding-F02.score.yml"
    assert causes(b"score: 85\nscore: 20\nreason: x\n", name, Place("r/" + name, "design", 3)) \
        == ["duplicate_key"]


def test_values_are_shown_as_written_and_cut_to_200_characters() -> None:
    (d,) = judge_file(NAME, finding(severity="C:\\temp"), PLACE).diagnostics
    assert d.value == "C:\\temp" and "'C:\\temp'" in d.message
    (d,) = judge_file(NAME, finding(severity="y" * 500), PLACE).diagnostics
    assert d.value is not None and len(d.value) == 200 and d.value.endswith("…")


def test_python_frontmatter_handler_reads_findings_as_the_guard_does() -> None:
    import frontmatter

    from qrspi_guard.parse.frontmatter import Document, parse, yaml_handler_class

    text = finding(round="08").decode()
    post = frontmatter.loads(text, handler=yaml_handler_class()())
    doc = parse(text)
    assert isinstance(doc, Document) and post.metadata == doc.data and doc.data["round"] == "08"
    # `--- ` is not a fence for the guard: python-frontmatter then sees no metadata
    loose = frontmatter.loads("--- \nseverity: high\n---\nx\n", handler=yaml_handler_class()())
    assert loose.metadata == {}
