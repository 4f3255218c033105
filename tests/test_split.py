"""The split core: the input grammar, numbering, validation, the mixing rule, the
round of a directory that is not round-NN, and reruns (split.md, generations.md §8).
Every row of split.md's tables has a case here; the writer is in test_split_io.py,
the end-to-end cases in test_split_cli.py and test_split_reliability.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from qrspi_guard.contract.layout import RoundRef
from qrspi_guard.engine.discover import round_of_dir
from qrspi_guard.split import (
    EXIT_OK,
    EXIT_REFUSED,
    InputKind,
    Target,
    Write,
    clean_sentinel,
    earlier_output,
    finding_name,
    parse_stdout,
    plan_split,
    target_of,
)
from qrspi_guard.split.errors import SplitUsageError
from qrspi_guard.split.target import infer_round

B = b"<<<FINDING-BOUNDARY>>>"
TAG = "quality-codex"


def finding(n: int, tag: str = TAG, rnd: int = 3, body: str = "The message.",
            **fields: str) -> bytes:
    values = {"finding_id": f"R{rnd}-F{n:02d}", "severity": "medium",
              "change_type": "correctness", "referenced_files": "[design.md:L1-L2]",
              "artifact": "design", "round": str(rnd), "reviewer": tag}
    values.update(fields)
    front = "".join(f"{k}: {v}\n" for k, v in values.items() if v is not None)
    return f"---\n{front}---\n\n{body}\n".encode()


def stdout_of(*blocks: bytes, preamble: bytes = b"") -> bytes:
    return preamble + b"".join(B + b"\n" + block for block in blocks)


def ref(root: Path, step: str = "design", rnd: str = "round-03") -> RoundRef:
    path = root / "reviews" / step / rnd
    path.mkdir(parents=True, exist_ok=True)
    got = round_of_dir(str(path))
    assert got is not None
    return got


def causes(plan) -> list[str]:  # type: ignore[no-untyped-def]
    return [d.cause for d in plan.diagnostics]


# -- the input grammar --------------------------------------------------------------

GRAMMAR = [
    # (id, stdout, kind, number of blocks)
    ("sentinel-bare", b"NO_FINDINGS", InputKind.NO_FINDINGS, 0),
    ("sentinel-lf", b"NO_FINDINGS\n", InputKind.NO_FINDINGS, 0),
    ("sentinel-two-lf-is-not", b"NO_FINDINGS\n\n", InputKind.NO_BOUNDARY, 0),
    ("sentinel-trailing-space-is-not", b"NO_FINDINGS ", InputKind.NO_BOUNDARY, 0),
    ("sentinel-crlf-is-not", b"NO_FINDINGS\r\n", InputKind.NO_BOUNDARY, 0),
    ("sentinel-leading-space-is-not", b" NO_FINDINGS", InputKind.NO_BOUNDARY, 0),
    ("empty", b"", InputKind.EMPTY, 0),
    ("lone-newline", b"\n", InputKind.EMPTY, 0),
    ("blank-lines-only", b"\n\n  \n", InputKind.NO_BOUNDARY, 0),
    ("prose-no-boundary", b"I found nothing worth reporting.\n", InputKind.NO_BOUNDARY, 0),
    ("indented-boundary", b" " + B + b"\n" + finding(1), InputKind.NO_BOUNDARY, 0),
    ("tab-indented-boundary", b"\t" + B + b"\n" + finding(1), InputKind.NO_BOUNDARY, 0),
    ("crlf-boundary", B + b"\r\n" + finding(1), InputKind.NO_BOUNDARY, 0),
    ("boundary-trailing-space", B + b" \n" + finding(1), InputKind.NO_BOUNDARY, 0),
    ("one-finding", stdout_of(finding(1)), InputKind.FINDINGS, 1),
    ("boundary-no-final-newline", B + b"\n" + finding(1).rstrip(b"\n"),
     InputKind.FINDINGS, 1),
    ("last-line-is-boundary-without-lf", finding(1) + B, InputKind.FINDINGS, 0),
    ("two-findings-with-preamble", stdout_of(finding(1), finding(2), preamble=b"Hi.\n"),
     InputKind.FINDINGS, 2),
    ("boundary-then-nothing", B + b"\n", InputKind.FINDINGS, 0),
    ("boundary-then-blank-lines", B + b"\n\n \t\n\n", InputKind.FINDINGS, 0),
    ("blank-block-between", stdout_of(finding(1), b"\n\n", finding(2)), InputKind.FINDINGS, 2),
    ("trailing-empty-boundary", stdout_of(finding(1), b""), InputKind.FINDINGS, 1),
    ("sentinel-with-boundaries-is-preamble", b"NO_FINDINGS\n" + stdout_of(finding(1)),
     InputKind.FINDINGS, 1),
]


@pytest.mark.parametrize("data,kind,blocks", [r[1:] for r in GRAMMAR],
                         ids=[r[0] for r in GRAMMAR])
def test_grammar_classifies_stdout(data: bytes, kind: InputKind, blocks: int) -> None:
    parsed = parse_stdout(data)
    assert parsed.kind is kind
    assert len(parsed.blocks) == blocks


def test_near_miss_boundary_is_named_in_the_hint() -> None:
    assert "indented" in (parse_stdout(b"  " + B + b"\nx\n").hint or "")
    assert "CR" in (parse_stdout(B + b"\r\nx\n").hint or "")
    assert "byte-exact" in (parse_stdout(b"NO_FINDINGS\r\n").hint or "")


def test_preamble_is_dropped_and_blocks_keep_their_bytes() -> None:
    parsed = parse_stdout(stdout_of(finding(1), preamble=b"Reviewing...\nsecond line\n"))
    assert parsed.blocks == (finding(1),)


BLOCK_SHAPES = [
    ("leading-blank-lines", b"\n\n  \n" + finding(1), finding(1)),
    ("trailing-blank-lines", finding(1) + b"\n\n \t\n", finding(1)),
    ("both", b"\n" + finding(1) + b"\n\n", finding(1)),
    ("no-final-newline", finding(1).rstrip(b"\n"), finding(1)),
    ("inner-blank-lines-kept", b"---\na: 1\n---\n\n\npara\n\n\npara2\n",
     b"---\na: 1\n---\n\n\npara\n\n\npara2\n"),
    ("trailing-spaces-on-text-kept", b"text  \n\n", b"text  \n"),
    ("lone-cr-line-is-not-blank", b"\r\ntext\n", b"\r\ntext\n"),
]


@pytest.mark.parametrize("block,expected", [r[1:] for r in BLOCK_SHAPES],
                         ids=[r[0] for r in BLOCK_SHAPES])
def test_block_is_stripped_of_blank_lines_and_ends_in_one_newline(block: bytes,
                                                                  expected: bytes) -> None:
    (got,) = parse_stdout(B + b"\n" + block).blocks
    assert got == expected
    assert got.endswith(b"\n") and not got.endswith(b"\n\n")


# -- split.md table 1: the behaviour the reference has ------------------------------


def test_findings_are_numbered_in_order_zero_padded(tmp_path: Path) -> None:
    r = ref(tmp_path)
    plan = plan_split(stdout_of(finding(1), finding(2)), r, TAG, [])
    assert plan.exit_code == EXIT_OK, plan.diagnostics
    assert [w.name for w in plan.writes] == ["quality-codex.finding-F01.md",
                                             "quality-codex.finding-F02.md"]
    assert [w.data for w in plan.writes] == [finding(1), finding(2)]


def test_f100_follows_f99(tmp_path: Path) -> None:
    r = ref(tmp_path)
    plan = plan_split(stdout_of(*(finding(n) for n in range(1, 151))), r, TAG, [])
    assert plan.exit_code == EXIT_OK, plan.diagnostics[:3]
    names = [w.name for w in plan.writes]
    assert names[98:101] == [finding_name(TAG, 99), "quality-codex.finding-F100.md",
                             "quality-codex.finding-F101.md"]
    assert len(names) == 150 and names[0] == "quality-codex.finding-F01.md"


def test_no_findings_sentinel_plans_the_reference_clean_file(tmp_path: Path) -> None:
    r = ref(tmp_path)
    plan = plan_split(b"NO_FINDINGS\n", r, TAG, [])
    assert plan.exit_code == EXIT_OK and plan.diagnostics == []
    assert plan.writes == [Write("quality-codex.clean.md",
                                 b"---\nreviewer: quality-codex\nround: 03\nfindings: 0\n---\n")]


def test_clean_sentinel_spells_the_round_as_the_directory(tmp_path: Path) -> None:
    assert clean_sentinel("a-claude", "110") == b"---\nreviewer: a-claude\nround: 110\n" \
                                                 b"findings: 0\n---\n"
    plan = plan_split(b"NO_FINDINGS", ref(tmp_path, rnd="round-110"), TAG, [])
    assert b"round: 110\n" in plan.writes[0].data and plan.exit_code == EXIT_OK


MALFORMED = [
    ("empty", b"", "empty"),
    ("lone-newline", b"\n", "empty"),
    ("no-boundary-no-sentinel", b"All good, nothing to report.\n", "no <<<FINDING-BOUNDARY>>>"),
    ("crlf-boundaries", stdout_of(finding(1)).replace(b"\n", b"\r\n"),
     "no <<<FINDING-BOUNDARY>>>"),
    ("only-blank-blocks", B + b"\n\n" + B + b"\n", "every block is blank"),
]


@pytest.mark.parametrize("data,said", [r[1:] for r in MALFORMED], ids=[r[0] for r in MALFORMED])
def test_malformed_stdout_exits_1_and_writes_nothing(tmp_path: Path, data: bytes,
                                                     said: str) -> None:
    plan = plan_split(data, ref(tmp_path), TAG, [])
    assert plan.exit_code == EXIT_REFUSED
    assert plan.writes == [] and plan.removals == []
    assert len(plan.problems) == 1 and said in plan.problems[0]


# -- split.md table 2: what split adds ----------------------------------------------


def test_a_blank_block_burns_no_number(tmp_path: Path) -> None:
    plan = plan_split(stdout_of(finding(1), b"\n \n", finding(2)), ref(tmp_path), TAG, [])
    assert [w.name for w in plan.writes] == [finding_name(TAG, 1), finding_name(TAG, 2)]
    assert plan.exit_code == EXIT_OK


VALIDATION = [
    # (id, block, the cause the block must raise)
    ("impersonation", finding(1, reviewer="scope-codex"), "reviewer_tag_mismatch"),
    ("claude-posing", finding(1, reviewer="quality-claude"), "reviewer_tag_mismatch"),
    ("round-field-differs", finding(1, round="4"), "round_mismatch"),
    ("finding-id-round-differs", finding(1, finding_id="R2-F01"), "round_mismatch"),
    ("severity-enum", finding(1, severity="critical"), "severity_out_of_enum"),
    ("change-type-enum", finding(1, change_type="bug"), "change_type_out_of_enum"),
    ("category-not-alias", finding(1, change_type=None, category="style"), "missing_change_type"),
    ("missing-reviewer", finding(1, reviewer=None), "missing_reviewer"),
    ("missing-message", finding(1, body=""), "missing_message"),
    ("no-frontmatter", b"Just prose, no fences.\n", "no_frontmatter"),
    ("bad-yaml", b"---\nseverity: [unclosed\n---\nbody\n", "malformed_yaml"),
    ("crlf-content", finding(1).replace(b"\n", b"\r\n"), "crlf_line_endings"),
    ("combined", finding(1) + b"finding_id: R3-F02\n", "combined_findings"),
]


@pytest.mark.parametrize("block,cause", [r[1:] for r in VALIDATION], ids=[r[0] for r in VALIDATION])
def test_a_failing_block_is_written_by_default_and_exits_1(tmp_path: Path, block: bytes,
                                                           cause: str) -> None:
    plan = plan_split(stdout_of(finding(1), block), ref(tmp_path), TAG, [])
    assert cause in causes(plan)
    assert all(d.file == finding_name(TAG, 2) for d in plan.errors)
    assert plan.exit_code == EXIT_REFUSED
    assert [w.name for w in plan.writes] == [finding_name(TAG, 1), finding_name(TAG, 2)]


@pytest.mark.parametrize("block,cause", [r[1:] for r in VALIDATION], ids=[r[0] for r in VALIDATION])
def test_reject_invalid_plans_no_write_at_all(tmp_path: Path, block: bytes, cause: str) -> None:
    plan = plan_split(stdout_of(finding(1), block), ref(tmp_path), TAG, [], reject_invalid=True)
    assert cause in causes(plan)
    assert plan.exit_code == EXIT_REFUSED and plan.writes == []


def test_duplicate_ids_within_the_new_attempt_are_caught(tmp_path: Path) -> None:
    plan = plan_split(stdout_of(finding(1), finding(1)), ref(tmp_path), TAG, [])
    assert "duplicate_finding_id" in causes(plan) and plan.exit_code == EXIT_REFUSED


def test_warnings_are_reported_but_do_not_fail(tmp_path: Path) -> None:
    plan = plan_split(stdout_of(finding(1, artifact="plan")), ref(tmp_path), TAG, [])
    assert causes(plan) == ["artifact_step_mismatch"]
    assert plan.exit_code == EXIT_OK and len(plan.writes) == 1


def test_validation_uses_the_directory_round_and_the_task_place(tmp_path: Path) -> None:
    r = ref(tmp_path / "x", step="tasks/task-07", rnd="round-02")
    assert r.is_task and r.round == 2
    plan = plan_split(stdout_of(finding(1, rnd=2, artifact="task-07")), r, TAG, [])
    assert plan.diagnostics == [] and plan.exit_code == EXIT_OK


MIXING = [
    # (id, existing names, mixes)
    ("finding", ["quality-codex.finding-F01.md"], True),
    ("clean", ["quality-codex.clean.md"], True),
    ("sidecar-alone", ["quality-codex.finding-F03.score.yml"], True),
    ("other-tag", ["quality-claude.finding-F01.md", "scope-codex.clean.md"], False),
    ("hidden-temp", [".quality-codex.split-abc.tmp"], False),
    ("orchestrator", ["round-03-verifier-disabled.md"], False),
]


@pytest.mark.parametrize("names,mixes", [r[1:] for r in MIXING], ids=[r[0] for r in MIXING])
@pytest.mark.parametrize("stdout", [b"NO_FINDINGS\n", stdout_of(finding(1))],
                         ids=["sentinel", "findings"])
def test_earlier_output_of_the_tag_refuses_without_replace(tmp_path: Path, names: list[str],
                                                           mixes: bool, stdout: bytes) -> None:
    plan = plan_split(stdout, ref(tmp_path), TAG, names)
    assert ("split_would_mix_attempts" in causes(plan)) is mixes
    if mixes:
        assert plan.exit_code == EXIT_REFUSED and plan.writes == [] and plan.removals == []
    else:
        assert plan.exit_code == EXIT_OK and plan.writes and plan.removals == []


def test_replace_plans_removal_of_findings_sidecars_and_clean(tmp_path: Path) -> None:
    names = ["quality-codex.finding-F01.md", "quality-codex.finding-F01.score.yml",
             "quality-codex.finding-F07.md", "quality-codex.clean.md",
             "quality-claude.finding-F01.md"]
    plan = plan_split(stdout_of(finding(1)), ref(tmp_path), TAG, names, replace=True)
    assert plan.exit_code == EXIT_OK
    assert plan.removals == sorted(names[:4])
    assert earlier_output(TAG, names) == sorted(names[:4])


# -- directories that are not round-NN (generations.md §8) --------------------------


def test_a_round_nn_directory_is_its_own_round_and_a_matching_round_option_is_fine(
        tmp_path: Path) -> None:
    r = ref(tmp_path)
    for option in (None, 3):
        got = target_of(r.round_dir, option)
        assert (got.round, got.round_text, got.step, got.pseudo) == (3, "03", "design", False)


def test_a_round_option_that_disagrees_with_a_round_nn_directory_is_a_usage_error(
        tmp_path: Path) -> None:
    with pytest.raises(SplitUsageError, match="--round 4 disagrees"):
        target_of(ref(tmp_path).round_dir, 4)


@pytest.mark.parametrize("rel,said", [
    ("reviews/design", "inside a reviews/ tree"),
    ("reviews", "inside a reviews/ tree"),
    ("reviews/design/round-03/notes", "inside a reviews/ tree"),
    ("work/round-1", "named like one but not round-NN"),
    ("work/round-00", "named like one but not round-NN"),
    ("work/round-05-fanout", "named like one but not round-NN"),
], ids=["step-dir", "reviews-dir", "inside-a-round", "unpadded", "round-zero", "suffixed"])
def test_directories_that_are_plainly_a_mistake_are_refused(tmp_path: Path, rel: str,
                                                            said: str) -> None:
    (tmp_path / rel).mkdir(parents=True)
    with pytest.raises(SplitUsageError, match=said):
        target_of(str(tmp_path / rel))


def test_any_other_directory_is_a_pseudo_round_with_the_round_option(tmp_path: Path) -> None:
    got = target_of(str(tmp_path), 7)
    assert (got.round, got.round_text, got.step, got.pseudo) == (7, "7", None, True)
    got = target_of(str(tmp_path))
    assert (got.round, got.round_text, got.pseudo) == (None, None, True)


def pseudo(tmp_path: Path, option: int | None = None) -> Target:
    return target_of(str(tmp_path), option)


INFERENCE = [
    # (id, blocks, inferred round, mismatch reported)
    ("agree", [finding(1, rnd=3), finding(2, rnd=3)], 3, False),
    ("leading-zeros-agree", [finding(1, rnd=3), finding(2, rnd=3, finding_id="R003-F02")],
     3, False),
    ("disagree", [finding(1, rnd=3), finding(2, rnd=4)], None, True),
    ("no-id-has-no-say", [finding(1, rnd=3, finding_id=None), finding(2, rnd=5)], 5, False),
    ("malformed-id-has-no-say", [finding(1, finding_id="R3F01"), finding(2, rnd=5)], 5, False),
    ("no-usable-id", [b"Just prose.\n"], None, False),
    ("round-zero-is-no-round", [finding(1, rnd=0)], None, False),
    ("5000-digit-round-is-no-round", [finding(1, finding_id="R" + "1" * 5000 + "-F01")],
     None, False),
    ("5000-digit-disagreement-is-cut-in-the-message",
     [finding(1, rnd=3), finding(2, finding_id="R" + "1" * 5000 + "-F02")], None, True),
]


@pytest.mark.parametrize("blocks,expected,mismatch", [r[1:] for r in INFERENCE],
                         ids=[r[0] for r in INFERENCE])
def test_a_pseudo_round_takes_the_round_its_finding_ids_agree_on(
        tmp_path: Path, blocks: list[bytes], expected: int | None, mismatch: bool) -> None:
    names = [finding_name(TAG, i) for i in range(1, len(blocks) + 1)]
    got, diags = infer_round(pseudo(tmp_path), tuple(blocks), names)
    assert got.round == expected
    assert [d.cause for d in diags] == (["round_mismatch"] if mismatch else [])
    assert all(len(d.message) < 400 for d in diags)


def test_the_round_option_wins_over_finding_ids_and_pins_them(tmp_path: Path) -> None:
    plan = plan_split(stdout_of(finding(1, rnd=3)), pseudo(tmp_path, 4), TAG, [])
    assert "round_mismatch" in causes(plan) and plan.exit_code == EXIT_REFUSED


def test_findings_into_a_pseudo_round_validate_against_the_agreed_round(tmp_path: Path) -> None:
    plan = plan_split(stdout_of(finding(1, rnd=3), finding(2, rnd=3)), pseudo(tmp_path), TAG, [])
    assert plan.diagnostics == [] and plan.exit_code == EXIT_OK
    assert [w.name for w in plan.writes] == [finding_name(TAG, 1), finding_name(TAG, 2)]


def test_a_round_field_that_differs_from_the_agreed_finding_ids_is_round_mismatch(
        tmp_path: Path) -> None:
    plan = plan_split(stdout_of(finding(1, rnd=3, round="4")), pseudo(tmp_path), TAG, [])
    assert causes(plan) == ["round_mismatch"]


def test_findings_that_disagree_on_the_round_are_written_and_named(tmp_path: Path) -> None:
    plan = plan_split(stdout_of(finding(1, rnd=3), finding(2, rnd=4)), pseudo(tmp_path), TAG, [])
    assert causes(plan) == ["round_mismatch"] and plan.exit_code == EXIT_REFUSED
    assert "--round N" in plan.diagnostics[0].message and len(plan.writes) == 2


def test_no_findings_without_a_round_writes_the_fan_in_splitters_sentinel(tmp_path: Path) -> None:
    plan = plan_split(b"NO_FINDINGS", pseudo(tmp_path), TAG, [])
    assert plan.diagnostics == [] and plan.exit_code == EXIT_OK
    assert plan.writes == [Write("quality-codex.clean.md",
                                 b"---\nreviewer: quality-codex\nfindings: 0\n---\n")]
    plan = plan_split(b"NO_FINDINGS", pseudo(tmp_path, 12), TAG, [])
    assert plan.writes[0].data == b"---\nreviewer: quality-codex\nround: 12\nfindings: 0\n---\n"


# -- a rerun over its own output ------------------------------------------------------


def rerun(tmp_path: Path, stdout: bytes, data: dict[str, bytes | None],
          **kw: bool) -> object:
    return plan_split(stdout, ref(tmp_path), TAG, list(data), existing_data=data, **kw)


def test_a_byte_identical_rerun_changes_nothing_and_succeeds(tmp_path: Path) -> None:
    out = stdout_of(finding(1), finding(2))
    data: dict[str, bytes | None] = {finding_name(TAG, 1): finding(1),
                                     finding_name(TAG, 2): finding(2)}
    for replace in (False, True):
        plan = rerun(tmp_path, out, data, replace=replace)
        assert plan.exit_code == EXIT_OK and plan.writes == [] and plan.removals == []
        assert plan.files == sorted(data) and plan.diagnostics == []


def test_a_byte_identical_no_findings_rerun_changes_nothing(tmp_path: Path) -> None:
    data: dict[str, bytes | None] = {"quality-codex.clean.md": clean_sentinel(TAG, "03")}
    plan = rerun(tmp_path, b"NO_FINDINGS\n", data)
    assert plan.exit_code == EXIT_OK and plan.writes == [] and plan.unchanged


def test_a_rerun_of_invalid_blocks_keeps_its_exit_code(tmp_path: Path) -> None:
    bad = finding(1, severity="critical")
    plan = rerun(tmp_path, stdout_of(bad), {finding_name(TAG, 1): bad})
    assert plan.writes == [] and plan.exit_code == EXIT_REFUSED
    assert causes(plan) == ["severity_out_of_enum"]


DIFFERENCES = [
    # (id, the tag's earlier files: name -> bytes or None for not a regular file)
    ("one-byte", {finding_name(TAG, 1): finding(1),
                  finding_name(TAG, 2): finding(2)[:-2] + b"!\n"}),
    ("one-file-fewer", {finding_name(TAG, 1): finding(1)}),
    ("one-file-more", {finding_name(TAG, 1): finding(1), finding_name(TAG, 2): finding(2),
                       finding_name(TAG, 3): finding(3)}),
    ("a-sidecar-beside", {finding_name(TAG, 1): finding(1), finding_name(TAG, 2): finding(2),
                          "quality-codex.finding-F01.score.yml": b"score: 90\nreason: ok\n"}),
    ("not-a-regular-file", {finding_name(TAG, 1): finding(1), finding_name(TAG, 2): None}),
    ("clean-instead", {"quality-codex.clean.md": clean_sentinel(TAG, "03")}),
]


@pytest.mark.parametrize("data", [r[1] for r in DIFFERENCES], ids=[r[0] for r in DIFFERENCES])
def test_any_difference_from_the_earlier_output_is_still_mixing(
        tmp_path: Path, data: dict[str, bytes | None]) -> None:
    plan = rerun(tmp_path, stdout_of(finding(1), finding(2)), data)
    assert causes(plan) == ["split_would_mix_attempts"] and plan.exit_code == EXIT_REFUSED
    assert plan.writes == [] and plan.files == []
